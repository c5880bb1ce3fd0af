package dev.fenceline.transport.ucx;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.lang.ref.Reference;
import java.nio.ByteBuffer;
import java.nio.MappedByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import org.agrona.BufferUtil;
import org.junit.jupiter.api.Test;

/**
 * A range a peer's numbers point at is used only where it lies whole in one shared-memory segment
 * mapped since the snapshot (overlapping no mapping of the same file then), and its last byte can be read: on
 * maps text of the test's making, and on this process's own mappings (a /dev/shm file mapped after
 * the snapshot, the same file cut short, anonymous memory, a mapping that was there before).
 */
class ProcessMappingsTest {
    private static final String MAPS = String.join("\n",
            "10000-12000 r--p 00000000 08:01 77   /usr/bin/java",
            "12000-14000 rw-p 00002000 08:01 77   /usr/bin/java",
            "20000-24000 rw-s 00000000 00:19 500  /dev/shm/seg (deleted)",
            "24000-28000 rw-s 00004000 00:19 500  /dev/shm/seg (deleted)",
            "28000-2a000 rw-p 00000000 00:00 0",
            "30000-34000 rw-s 00000000 00:19 600  /dev/shm/other",
            "34000-38000 rw-s 00000000 00:19 601  /dev/shm/next",
            "40000-44000 rw-s 00000000 08:01 700  /home/someone/notes",
            "50000-52000 rw-s 00000000 00:01 0    /SYSV00000000 (deleted)",
            "52000-54000 rw-s 00000000 00:01 1    /SYSV00000000 (deleted)",
            "60000-62000 rw-s 00000000 00:01 0",
            "ffffffffff600000-ffffffffff601000 --xp 00000000 00:00 0 [vsyscall]");

    private static final String BEFORE = "10000-12000 r--p 00000000 08:01 77   /usr/bin/java\n"
            + "12000-14000 rw-p 00002000 08:01 77   /usr/bin/java\n"
            + "28000-2a000 rw-p 00000000 00:00 0\n";

    private static boolean within(long address, long length) throws IOException {
        return ProcessMappings.within(MAPS, ProcessMappings.snapshot(BEFORE), address, length);
    }

    @Test
    void aRangeInsideOneNewSharedFileMappingIsReached() throws IOException {
        assertTrue(within(0x30000, 0x4000));
        assertTrue(within(0x30100, 0x100));
        assertTrue(within(0x30000, 0));
        assertTrue(within(0x21000, 0x6000), "a mapping split in two over the same file");
        assertTrue(within(0x50000, 0x2000), "a System V segment whose id (its inode here) is 0, a host's first");
        assertTrue(within(0x52000, 0x2000), "a System V segment");
        assertFalse(within(0x50000, 0x4000), "into another System V segment");
    }

    @Test
    void aRangeRunningIntoTheNextMappingIsNot() throws IOException {
        assertFalse(within(0x30000, 0x4001), "into another file's mapping");
        assertFalse(within(0x24000, 0x5000), "into anonymous memory");
        assertFalse(within(0x2c000, 8), "in no mapping");
        assertFalse(within(0x30000, Long.MAX_VALUE), "wrapping around");
        assertFalse(within(0, 8), "at address 0");
    }

    @Test
    void thisProcesssOwnMemoryIsNot() throws IOException {
        assertFalse(within(0x12100, 8), "a private file mapping (a library's data) that was there before");
        assertFalse(within(0x28000, 0x100), "anonymous memory");
        assertFalse(withinAfter("30000-34000 rw-s 00000000 00:19 600  /dev/shm/other", 0x30000, 8),
                "a shared mapping that was there before the unpack (this process's own region, say)");
        assertFalse(withinAfter("32000-33000 rw-s 00002000 00:19 600  /dev/shm/other", 0x30000, 8),
                "a mapping grown from one there before");
        assertFalse(within(0x40000, 8), "a shared file that is not a shared-memory segment");
        assertFalse(within(0x60000, 8), "shared anonymous memory");
    }

    /** The JVM unmaps memory all the time, and a new segment may be mapped where it was. */
    @Test
    void aSegmentWhereOtherMemoryWasBeforeIsNew() throws IOException {
        assertTrue(withinAfter("30000-34000 rw-p 00000000 00:00 0", 0x30000, 0x4000), "anonymous memory before");
        assertTrue(withinAfter("30000-34000 rw-s 00000000 00:19 599  /dev/shm/gone", 0x30000, 8),
                "another segment before");
    }

    /** @return {@link ProcessMappings#within} on {@link #MAPS}, with {@code line} mapped before as well */
    private static boolean withinAfter(String line, long address, long length) throws IOException {
        return ProcessMappings.within(MAPS, ProcessMappings.snapshot(BEFORE + line + "\n"), address, length);
    }

    @Test
    void thisProcesssOwnMappingsAreReadAsTheyAre() throws IOException {
        Path segment = Files.createTempFile(Path.of("/dev/shm"), "fenceline-test-", ".seg");
        ProcessMappings.Snapshot before = ProcessMappings.snapshot();
        try (FileChannel ch = FileChannel.open(segment, StandardOpenOption.READ, StandardOpenOption.WRITE)) {
            ch.write(ByteBuffer.allocate(16384));
            MappedByteBuffer m = ch.map(FileChannel.MapMode.READ_WRITE, 0, 16384);
            long at = BufferUtil.address(m);
            assertTrue(ProcessMappings.reaches(before, at, 16384), "the file mapped since, whole");
            assertTrue(ProcessMappings.reaches(before, at + 4096, 8192));
            assertFalse(ProcessMappings.reaches(before, at, 16384 + 4096), "past its mapping");
            assertFalse(ProcessMappings.reaches(ProcessMappings.snapshot(), at, 16384), "there before");
            ch.truncate(4096); // the mapping stays; its last three pages now fault on touch
            assertTrue(ProcessMappings.reaches(before, at, 4096));
            assertFalse(ProcessMappings.reaches(before, at, 8192), "past the end of the file it maps");
            assertFalse(ProcessMappings.readable(at, 16384));
            assertTrue(ProcessMappings.readable(at, 4096));
            Reference.reachabilityFence(m);
        } finally {
            Files.deleteIfExists(segment);
        }
        ByteBuffer anonymous = ByteBuffer.allocateDirect(1 << 20);
        assertFalse(ProcessMappings.reaches(before, BufferUtil.address(anonymous), 8), "the JVM's anonymous memory");
        assertTrue(ProcessMappings.readable(BufferUtil.address(anonymous), 1 << 20));
        Reference.reachabilityFence(anonymous);
    }
}
