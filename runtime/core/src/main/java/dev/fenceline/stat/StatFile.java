package dev.fenceline.stat;

import static dev.fenceline.internal.StatLayout.INT;
import static dev.fenceline.internal.StatLayout.LONG;

import dev.fenceline.internal.StatLayout;
import java.io.IOException;
import java.lang.invoke.VarHandle;
import java.nio.ByteOrder;
import java.nio.MappedByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Stream;

/**
 * A counters file that a running Fenceline process publishes, mapped read-only. The process wrote
 * every byte of it, so every length and offset is checked before it is used: a damaged file is a
 * {@link StatFileException} naming the file and the field, never a wrong number or a crash.
 *
 * <pre>{@code
 * for (Path p : StatFile.list(StatFile.defaultDirectory())) {
 *     try (StatFile f = StatFile.open(p)) {
 *         f.read().forEach(v -> System.out.println(v.owner() + " " + v.counter().column() + " " + v.value()));
 *     }
 * }
 * }</pre>
 */
public final class StatFile implements AutoCloseable {
    private final Path path;
    private final MappedByteBuffer buffer;
    private final int counters;
    private final long pid;
    private final Instant started;
    private final Duration interval;
    private volatile boolean closed;

    private StatFile(Path path, MappedByteBuffer buffer, int counters, long pid) {
        this.path = path;
        this.buffer = buffer;
        this.counters = counters;
        this.pid = pid;
        this.started = Instant.ofEpochMilli(buffer.getLong(StatLayout.START_OFFSET));
        this.interval = Duration.ofMillis(Math.max(0, buffer.getLong(StatLayout.INTERVAL_OFFSET)));
    }

    /** @return where processes publish by default (setting {@code fenceline.stat.directory} empty) */
    public static Path defaultDirectory() {
        return StatLayout.defaultDirectory();
    }

    /**
     * @param directory a counters directory
     * @return its counters files whose process still runs, by process id; empty if there is no directory
     * @throws StatFileException if the directory cannot be listed
     */
    public static List<Path> list(Path directory) {
        if (!Files.isDirectory(directory)) {
            return List.of();
        }
        try (Stream<Path> files = Files.list(directory)) {
            return files.filter(p -> StatLayout.pidOf(p) > 0 && alive(StatLayout.pidOf(p)))
                    .sorted((x, y) -> {
                        int byPid = Long.compare(StatLayout.pidOf(x), StatLayout.pidOf(y));
                        return byPid != 0 ? byPid : x.getFileName().toString().compareTo(y.getFileName().toString());
                    })
                    .toList();
        } catch (IOException e) {
            throw new StatFileException("cannot list counters directory " + directory + ": " + e.getMessage());
        }
    }

    private static boolean alive(long pid) {
        return ProcessHandle.of(pid).map(ProcessHandle::isAlive).orElse(false);
    }

    /**
     * @param path a counters file
     * @return it, mapped read-only, its header checked
     * @throws StatFileException if it is missing, not a counters file, of another version, or its
     *     header does not match its length
     */
    public static StatFile open(Path path) {
        long size;
        try {
            size = Files.size(path);
        } catch (NoSuchFileException e) {
            throw new StatFileException("no counters file " + path + " (its process may have closed it)");
        } catch (IOException e) {
            throw new StatFileException("cannot read counters file " + path + ": " + e.getMessage());
        }
        if (size < StatLayout.HEADER_LENGTH || size > Integer.MAX_VALUE) {
            throw new StatFileException("counters file " + path + " is " + size + " bytes, not between the header's "
                    + StatLayout.HEADER_LENGTH + " and " + Integer.MAX_VALUE);
        }
        MappedByteBuffer b;
        try (FileChannel ch = FileChannel.open(path, StandardOpenOption.READ)) {
            b = ch.map(FileChannel.MapMode.READ_ONLY, 0, size);
        } catch (IOException e) {
            throw new StatFileException("cannot map counters file " + path + ": " + e.getMessage());
        }
        b.order(ByteOrder.nativeOrder());
        int magic = (int) INT.getAcquire(b, StatLayout.MAGIC_OFFSET);
        if (magic != StatLayout.MAGIC) {
            throw new StatFileException("counters file " + path + ": magic number 0x" + Integer.toHexString(magic)
                    + " is not Fenceline's 0x" + Integer.toHexString(StatLayout.MAGIC)
                    + " (not a counters file, or its process has not finished writing the header)");
        }
        int version = b.getInt(StatLayout.VERSION_OFFSET);
        if (version != StatLayout.VERSION) {
            throw new StatFileException("counters file " + path + ": layout version " + version
                    + ", this reader knows " + StatLayout.VERSION);
        }
        int n = b.getInt(StatLayout.COUNTERS_OFFSET);
        if (n <= 0 || StatLayout.fileLength(n) != size) {
            throw new StatFileException("counters file " + path + ": " + n + " counter slots do not fit a file of "
                    + size + " bytes");
        }
        long pid = b.getLong(StatLayout.PID_OFFSET);
        if (pid <= 0) {
            throw new StatFileException("counters file " + path + ": process id " + pid + " is not positive");
        }
        return new StatFile(path, b, n, pid);
    }

    /** @return the file */
    public Path path() {
        return path;
    }

    /** @return the id of the process that writes it */
    public long pid() {
        return pid;
    }

    /** @return whether that process still runs */
    public boolean processAlive() {
        return alive(pid);
    }

    /** @return when that process's runtime started publishing */
    public Instant started() {
        return started;
    }

    /** @return when the counters were last brought up to date */
    public Instant updated() {
        checkOpen();
        return Instant.ofEpochMilli((long) LONG.getAcquire(buffer, StatLayout.UPDATED_OFFSET));
    }

    /** @return how often the process brings them up to date */
    public Duration interval() {
        return interval;
    }

    /** @return how many counters the file has room for */
    public int capacity() {
        return counters;
    }

    /**
     * @return every counter in use, in the order of its slot (a worker's counters, then its
     *     endpoints', as the process took the slots); a counter of a type this version does not
     *     know, or whose slot was taken again while it was read, is left out
     * @throws StatFileException if a counter's owner length is out of its bounds
     */
    public List<StatValue> read() {
        checkOpen();
        List<StatValue> out = new ArrayList<>();
        byte[] owner = new byte[StatLayout.MAX_OWNER_BYTES];
        for (int slot = 0; slot < counters; slot++) {
            int r = StatLayout.record(slot);
            if ((int) INT.getAcquire(buffer, r + StatLayout.STATE_OFFSET) != StatLayout.IN_USE) {
                continue;
            }
            int generation = (int) INT.getAcquire(buffer, r + StatLayout.GENERATION_OFFSET);
            StatCounter counter = StatCounter.ofType(buffer.getInt(r + StatLayout.TYPE_OFFSET));
            int ownerLength = buffer.getInt(r + StatLayout.OWNER_LENGTH_OFFSET);
            long value = (long) LONG.getAcquire(buffer, r + StatLayout.VALUE_OFFSET);
            boolean lengthOk = ownerLength >= 0 && ownerLength <= StatLayout.MAX_OWNER_BYTES;
            if (lengthOk) {
                buffer.get(r + StatLayout.OWNER_OFFSET, owner, 0, ownerLength);
            }
            VarHandle.acquireFence();
            if ((int) INT.getAcquire(buffer, r + StatLayout.GENERATION_OFFSET) != generation) {
                continue; // taken again while read: the next snapshot shows its new owner
            }
            if (!lengthOk) {
                throw new StatFileException("counters file " + path + ": counter " + slot + "'s owner length "
                        + ownerLength + " is not between 0 and " + StatLayout.MAX_OWNER_BYTES);
            }
            if (counter != null) {
                out.add(new StatValue(counter, new String(owner, 0, ownerLength, StandardCharsets.UTF_8), value));
            }
        }
        return out;
    }

    private void checkOpen() {
        if (closed) {
            throw new IllegalStateException("counters file " + path + " was closed");
        }
    }

    /** Lets the file go; the mapping is released with the buffer. */
    @Override
    public void close() {
        closed = true;
    }

    @Override
    public String toString() {
        return "StatFile[" + path + ", pid " + pid + "]";
    }
}
