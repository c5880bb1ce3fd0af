package dev.fenceline.stat;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.fenceline.internal.StatLayout;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/** The reader of counters files: what it reads, and that a damaged file is a typed error naming the field. */
@Timeout(value = 30, unit = TimeUnit.SECONDS)
class StatFileTest {
    private static final int COUNTERS = 8;

    @TempDir
    Path dir;

    /** A well-formed file of this process with two counters, changed by {@code damage} before it is written. */
    private Path file(String name, Consumer<ByteBuffer> damage) throws IOException {
        ByteBuffer b = ByteBuffer.allocate((int) StatLayout.fileLength(COUNTERS)).order(ByteOrder.nativeOrder());
        record(b, 0, StatCounter.OPERATIONS, "w", 42);
        record(b, 3, StatCounter.ENDPOINT_LIVE_LANES, "w->p#1", 2);
        b.putInt(StatLayout.record(5) + StatLayout.TYPE_OFFSET, StatCounter.FAILED.typeId()); // a free slot
        b.putInt(StatLayout.MAGIC_OFFSET, StatLayout.MAGIC).putInt(StatLayout.VERSION_OFFSET, StatLayout.VERSION)
                .putLong(StatLayout.PID_OFFSET, ProcessHandle.current().pid()).putLong(StatLayout.START_OFFSET, 1000)
                .putInt(StatLayout.COUNTERS_OFFSET, COUNTERS)
                .putLong(StatLayout.UPDATED_OFFSET, 2000).putLong(StatLayout.INTERVAL_OFFSET, 1000);
        damage.accept(b);
        Path p = dir.resolve(name);
        Files.write(p, b.array());
        return p;
    }

    private static void record(ByteBuffer b, int slot, StatCounter c, String owner, long value) {
        int r = StatLayout.record(slot);
        byte[] o = owner.getBytes(StandardCharsets.UTF_8);
        b.putInt(r + StatLayout.STATE_OFFSET, StatLayout.IN_USE).putInt(r + StatLayout.GENERATION_OFFSET, 1)
                .putLong(r + StatLayout.VALUE_OFFSET, value).putInt(r + StatLayout.TYPE_OFFSET, c.typeId())
                .putInt(r + StatLayout.OWNER_LENGTH_OFFSET, o.length).put(r + StatLayout.OWNER_OFFSET, o);
    }

    private Path pidFile() {
        return dir.resolve(ProcessHandle.current().pid() + "-1" + StatLayout.SUFFIX);
    }

    @Test
    void readsEveryAllocatedCounterWithItsOwner() throws IOException {
        try (StatFile f = StatFile.open(file(pidFile().getFileName().toString(), b -> { }))) {
            assertEquals(ProcessHandle.current().pid(), f.pid());
            assertEquals(COUNTERS, f.capacity());
            assertEquals(1000, f.started().toEpochMilli());
            assertEquals(2000, f.updated().toEpochMilli());
            assertEquals(List.of(new StatValue(StatCounter.OPERATIONS, "w", 42),
                    new StatValue(StatCounter.ENDPOINT_LIVE_LANES, "w->p#1", 2)), f.read());
            assertTrue(f.processAlive());
        }
        assertEquals(List.of(pidFile()), StatFile.list(dir), "this process's file is listed");
    }

    @Test
    void aFileOfAProcessThatIsGoneIsNotListed() throws IOException {
        long gone = Long.MAX_VALUE; // no process has this id
        file(gone + "-1" + StatLayout.SUFFIX, b -> { });
        file("notes.txt", b -> { });
        assertEquals(List.of(), StatFile.list(dir));
        assertEquals(List.of(), StatFile.list(dir.resolve("missing")), "no directory, no processes");
    }

    @Test
    void aCounterOfAnUnknownTypeIsLeftOut() throws IOException {
        Path p = file("x", b -> b.putInt(StatLayout.record(0) + StatLayout.TYPE_OFFSET, 9999));
        try (StatFile f = StatFile.open(p)) {
            assertEquals(List.of(new StatValue(StatCounter.ENDPOINT_LIVE_LANES, "w->p#1", 2)), f.read());
        }
    }

    private void assertRefused(Path p, String expected) {
        StatFileException e = assertThrows(StatFileException.class, () -> {
            try (StatFile f = StatFile.open(p)) {
                f.read();
            }
        });
        assertTrue(e.getMessage().contains(p.toString()) && e.getMessage().contains(expected), e.getMessage());
    }

    @Test
    void aDamagedFileIsATypedErrorNamingWhatIsWrong() throws IOException {
        assertRefused(dir.resolve("absent.stat"), "no counters file");
        Path tiny = dir.resolve("tiny");
        Files.write(tiny, new byte[10]);
        assertRefused(tiny, "is 10 bytes");
        assertRefused(file("magic", b -> b.putInt(StatLayout.MAGIC_OFFSET, 0x12345678)), "magic number 0x12345678");
        assertRefused(file("version", b -> b.putInt(StatLayout.VERSION_OFFSET, 7)), "layout version 7");
        assertRefused(file("slots", b -> b.putInt(StatLayout.COUNTERS_OFFSET, 9)),
                "9 counter slots do not fit a file of 1152 bytes");
        assertRefused(file("none", b -> b.putInt(StatLayout.COUNTERS_OFFSET, -1)), "-1 counter slots");
        assertRefused(file("pid", b -> b.putLong(StatLayout.PID_OFFSET, -3)), "process id -3 is not positive");
        assertRefused(file("owner", b -> b.putInt(StatLayout.record(3) + StatLayout.OWNER_LENGTH_OFFSET, 1 << 30)),
                "counter 3's owner length 1073741824 is not between 0 and 104");
    }

    @Test
    void aClosedFileIsNotReadAgain() throws IOException {
        StatFile f = StatFile.open(file("closed", b -> { }));
        f.close();
        f.close();
        assertThrows(IllegalStateException.class, f::read);
        assertThrows(IllegalStateException.class, f::updated);
    }

    @Test
    void fileNamesCarryTheProcessId() {
        assertEquals(123, StatLayout.pidOf(Path.of("123-4.stat")));
        assertEquals(-1, StatLayout.pidOf(Path.of("123-x.stat")));
        assertEquals(-1, StatLayout.pidOf(Path.of("abc-1.stat")));
        assertEquals(-1, StatLayout.pidOf(Path.of("123-1.txt")));
        assertEquals(-1, StatLayout.pidOf(Path.of("-1-1.stat")));
        assertEquals(StatCounter.FAST_PATH, StatCounter.ofType(StatCounter.FAST_PATH.typeId()));
        assertEquals(null, StatCounter.ofType(0));
    }
}
