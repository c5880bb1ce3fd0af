package dev.fenceline.transport.ucx;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.StringReader;
import java.nio.ByteBuffer;
import java.nio.MappedByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import org.agrona.BufferUtil;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A range a peer's numbers point at is used only where it lies whole in one mapped file of this
 * process and inside that file: on maps text of the test's making, and on this process's own
 * mappings (a mapped file, the same file cut short, anonymous memory).
 */
class ProcessMappingsTest {
    private static final String MAPS = String.join("\n",
            "10000-12000 r--p 00000000 08:01 77   /usr/bin/java",
            "20000-24000 rw-s 00000000 00:19 500  /dev/shm/seg (deleted)",
            "24000-28000 rw-s 00004000 00:19 500  /dev/shm/seg (deleted)",
            "28000-2a000 rw-p 00000000 00:00 0",
            "30000-34000 rw-s 00000000 00:19 600  /dev/shm/other",
            "34000-38000 rw-s 00000000 00:19 601  /dev/shm/next",
            "ffffffffff600000-ffffffffff601000 --xp 00000000 00:00 0 [vsyscall]");

    private static boolean reaches(long address, long length, long fileSize) throws IOException {
        return ProcessMappings.reaches(new BufferedReader(new StringReader(MAPS)), address, length, r -> fileSize);
    }

    @Test
    void aRangeInsideOneFileMappingAndItsFileIsReached() throws IOException {
        assertTrue(reaches(0x30000, 0x4000, 0x4000));
        assertTrue(reaches(0x30100, 0x100, 0x4000));
        assertTrue(reaches(0x30000, 0, 0x4000));
    }

    @Test
    void aRangeRunningIntoTheNextMappingIsNot() throws IOException {
        assertFalse(reaches(0x30000, 0x4001, 1 << 20), "into another file's mapping");
        assertFalse(reaches(0x24000, 0x5000, 1 << 20), "into anonymous memory");
        assertFalse(reaches(0x11000, 0x8000, 1 << 20), "into the hole after it");
        assertFalse(reaches(0x40000, 8, 1 << 20), "in no mapping");
        assertFalse(reaches(0x30000, Long.MAX_VALUE, 1 << 20), "wrapping around");
        assertFalse(reaches(0, 8, 1 << 20), "at address 0");
    }

    @Test
    void aMappingSplitInTwoOverTheSameFileCountsAsOne() throws IOException {
        assertTrue(reaches(0x21000, 0x6000, 0x8000));
        assertFalse(reaches(0x21000, 0x6000, 0x6000), "past the file's end: the first touch faults");
    }

    @Test
    void anonymousMemoryAndUnknownSizesAreNotVouchedFor() throws IOException {
        assertFalse(reaches(0x28000, 0x100, 1 << 20), "anonymous");
        assertFalse(reaches(0x30000, 0x100, -1), "a file whose size could not be read");
        assertFalse(ProcessMappings.reaches(new BufferedReader(new StringReader("not a maps line")), 0x30000, 8,
                r -> 1 << 20), "a format this does not read");
    }

    @Test
    void thisProcesssOwnMappingsAreReadAsTheyAre(@TempDir Path dir) throws IOException {
        Path file = dir.resolve("segment");
        try (FileChannel ch = FileChannel.open(file, StandardOpenOption.CREATE, StandardOpenOption.READ,
                StandardOpenOption.WRITE)) {
            ch.write(ByteBuffer.allocate(16384));
            MappedByteBuffer m = ch.map(FileChannel.MapMode.READ_WRITE, 0, 16384);
            long at = BufferUtil.address(m);
            assertTrue(ProcessMappings.reaches(at, 16384), "the mapped file, whole");
            assertTrue(ProcessMappings.reaches(at + 4096, 8192));
            assertFalse(ProcessMappings.reaches(at, 16384 + 4096), "past its mapping");
            ch.truncate(4096); // the mapping stays; its last three pages now fault on touch
            assertTrue(ProcessMappings.reaches(at, 4096));
            assertFalse(ProcessMappings.reaches(at, 8192), "past the end of the file it maps");
        }
        ByteBuffer anonymous = ByteBuffer.allocateDirect(1 << 20);
        assertFalse(ProcessMappings.reaches(BufferUtil.address(anonymous), 8), "the JVM's own anonymous memory");
        assertTrue(Files.exists(file));
    }
}
