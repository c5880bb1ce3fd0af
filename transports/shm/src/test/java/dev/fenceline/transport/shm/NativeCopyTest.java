package dev.fenceline.transport.shm;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.ByteBuffer;
import java.nio.file.Path;
import java.util.SplittableRandom;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * The native copy of large puts into a peer's sealed segment: every byte of the put lands, none
 * outside it moves, at sizes on both sides of the threshold and at unaligned offsets; only a
 * segment mapped as sealed takes it, and a heap source never does.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class NativeCopyTest {
    private static final int LENGTH = 3 << 20;
    private static final int FROM = 256 << 10;

    @TempDir
    Path dir;

    /** Where this build made the library (gcc on x86-64 Linux), it must load; elsewhere, say why not. */
    @Test
    void thisBuildsNativeCopyLoadsWhereItWasBuilt() {
        if (Boolean.getBoolean("fenceline.shm.native")) {
            assertNull(NativeCopy.unavailable(), "libfenceline-shm loads and copies correctly");
            // Its copy in the temporary directory went as soon as it was loaded (BundledLibrary).
            try (java.util.stream.Stream<Path> left = java.nio.file.Files.list(
                    Path.of(System.getProperty("java.io.tmpdir")))) {
                long since = java.lang.management.ManagementFactory.getRuntimeMXBean().getStartTime();
                assertEquals(java.util.List.of(), left.filter(p -> p.getFileName().toString()
                        .startsWith("libfenceline-shm-") && p.toFile().lastModified() >= since).toList(),
                        "nothing this JVM made is left in the temporary directory");
            } catch (java.io.IOException e) {
                throw new AssertionError(e);
            }
        } else {
            assertTrue(NativeCopy.unavailable() != null, "no library built: a reason is given");
        }
    }

    @Test
    void everyByteOfAPutLandsAndNoneAroundIt() throws Exception {
        Assumptions.assumeTrue(NativeCopy.unavailable() == null, "no native copy here: " + NativeCopy.unavailable());
        Path file = dir.resolve(Segments.processPrefix() + "native");
        DataSegment owner = DataSegment.create(file, LENGTH, true, () -> { });
        try {
            DataSegment.Peer seg = DataSegment.map(file, true, FROM);
            assertEquals(FROM, seg.nativeCopyFrom(), "a sealed segment takes the native copy from the threshold");
            ByteBuffer mine = owner.buffer();
            long seed = 0x5eed_c0b1L;
            System.out.println("NativeCopyTest seed " + Long.toHexString(seed));
            SplittableRandom random = new SplittableRandom(seed);
            int[] sizes = {16, 4095, FROM - 1, FROM, FROM + 1, 1 << 20, (1 << 20) + 7, 2 << 20};
            for (int size : sizes) {
                for (int offset : new int[] {0, 1, 63, 4096 + 5}) {
                    for (boolean direct : new boolean[] {true, false}) {
                        fill(mine, Math.max(0, offset - 1), offset + size + 1, (byte) 0x5a);
                        ByteBuffer src = direct ? ByteBuffer.allocateDirect(size + 3) : ByteBuffer.allocate(size + 3);
                        byte[] bytes = new byte[size];
                        for (int i = 0; i < size; i++) {
                            bytes[i] = (byte) random.nextInt();
                        }
                        src.position(3);
                        src.put(bytes).position(3); // a source not at its buffer's start
                        seg.put(offset, src, size);
                        assertEquals(3, src.position(), "the source does not move");
                        String what = size + " bytes at " + offset + (direct ? ", direct" : ", heap");
                        for (int i = 0; i < size; i++) {
                            if (mine.get(offset + i) != bytes[i]) {
                                assertEquals(bytes[i], mine.get(offset + i), what + ": byte " + i);
                            }
                        }
                        if (offset > 0) {
                            assertEquals((byte) 0x5a, mine.get(offset - 1), what + ": the byte before");
                        }
                        assertEquals((byte) 0x5a, mine.get(offset + size), what + ": the byte after");
                    }
                }
            }
        } finally {
            owner.close();
        }
    }

    /** A source whose bounds another thread moved after the check: the copy keeps to both buffers. */
    @Test
    void aLengthPastEitherBufferTakesTheCheckedCopy(@TempDir Path d) throws Exception {
        Assumptions.assumeTrue(NativeCopy.unavailable() == null, "no native copy here: " + NativeCopy.unavailable());
        Path file = d.resolve(Segments.processPrefix() + "bounds");
        DataSegment owner = DataSegment.create(file, FROM, true, () -> { });
        try {
            DataSegment.Peer seg = DataSegment.map(file, true, 4096);
            ByteBuffer src = ByteBuffer.allocateDirect(FROM);
            fill(src, 0, FROM, (byte) 0x11);
            assertThrows(IndexOutOfBoundsException.class, () -> seg.put(8, src, FROM),
                    "past the segment: the JVM's copy refuses it, nothing is written past it");
            src.limit(8192);
            seg.put(0, src, 16384); // checked as 16 KiB, but the source holds 8 KiB now
            ByteBuffer mine = owner.buffer();
            assertEquals((byte) 0x11, mine.get(8191), "the source's bytes are copied");
            assertEquals((byte) 0, mine.get(8192), "nothing past the source's limit is read");
        } finally {
            owner.close();
        }
    }

    @Test
    void onlyASegmentMappedAsSealedTakesIt() throws Exception {
        Path file = dir.resolve(Segments.processPrefix() + "either");
        DataSegment owner = DataSegment.create(file, 4096, true, () -> { });
        try {
            assertEquals(Integer.MAX_VALUE, DataSegment.map(file, false, FROM).nativeCopyFrom(),
                    "mapped where plain files are allowed: the JVM's copy");
            assertEquals(Integer.MAX_VALUE, DataSegment.map(file, true).nativeCopyFrom(), "no threshold: none");
        } finally {
            owner.close();
        }
    }

    private static void fill(ByteBuffer b, int from, int to, byte value) {
        for (int i = from; i < to; i++) {
            b.put(i, value);
        }
    }
}
