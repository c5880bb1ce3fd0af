package dev.fenceline.actor;

import dev.fenceline.Endpoint;
import dev.fenceline.EndpointStatistics;
import dev.fenceline.LaneStatistics;
import dev.fenceline.Worker;
import dev.fenceline.WorkerStatistics;
import dev.fenceline.internal.FencelineSettings;
import dev.fenceline.internal.StatLayout;
import dev.fenceline.stat.StatCounter;
import java.nio.ByteOrder;
import java.io.IOException;
import java.nio.MappedByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.Collection;
import java.util.IdentityHashMap;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Supplier;
import java.util.stream.Stream;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Publishes a runtime's counters in a mapped file for {@code fenceline stat} (the layout is
 * {@link StatLayout}'s). One thread of its own does everything that touches the file, the final
 * removal included, so a publication never races an unmapping; it reads the workers' statistics,
 * which any thread may, and never calls into an actor.
 */
public final class StatPublisher {
    private static final Logger LOG = LoggerFactory.getLogger(StatPublisher.class);
    private static final AtomicInteger SEQUENCE = new AtomicInteger();
    private static final StatCounter[] WORKER = Stream.of(StatCounter.values())
            .filter(c -> c.scope() == StatCounter.Scope.WORKER).toArray(StatCounter[]::new);
    private static final StatCounter[] ENDPOINT = Stream.of(StatCounter.values())
            .filter(c -> c.scope() == StatCounter.Scope.ENDPOINT).toArray(StatCounter[]::new);

    private final Path file;
    private final MappedByteBuffer buffer;
    private final int capacity;
    /** Free slots, lowest first (a stack: slots are taken from the top). */
    private final int[] free;
    private int freeCount;
    private final Supplier<? extends Collection<Worker>> workers;
    private final ScheduledExecutorService thread;
    private final Map<Worker, int[]> workerSlots = new IdentityHashMap<>();
    private final Map<Endpoint, int[]> endpointSlots = new IdentityHashMap<>();
    private final CompletableFuture<Void> closed = new CompletableFuture<>();
    /** Removes the file when the JVM exits first (unlinking it leaves the mapping valid for the writer). */
    private final Thread atExit;
    private boolean warnedFull;

    private StatPublisher(Path file, MappedByteBuffer buffer, int capacity, long intervalMillis,
            Supplier<? extends Collection<Worker>> workers) {
        this.file = file;
        this.buffer = buffer;
        this.capacity = capacity;
        this.workers = workers;
        this.free = new int[capacity];
        for (int i = 0; i < capacity; i++) {
            free[i] = capacity - 1 - i;
        }
        this.freeCount = capacity;
        buffer.order(ByteOrder.nativeOrder());
        buffer.putInt(StatLayout.VERSION_OFFSET, StatLayout.VERSION);
        buffer.putLong(StatLayout.PID_OFFSET, ProcessHandle.current().pid());
        buffer.putLong(StatLayout.START_OFFSET, System.currentTimeMillis());
        buffer.putInt(StatLayout.COUNTERS_OFFSET, capacity);
        buffer.putLong(StatLayout.INTERVAL_OFFSET, intervalMillis);
        buffer.putLong(StatLayout.UPDATED_OFFSET, System.currentTimeMillis());
        StatLayout.INT.setRelease(buffer, StatLayout.MAGIC_OFFSET, StatLayout.MAGIC); // last: the rest is then seen
        this.thread = Executors.newSingleThreadScheduledExecutor(r -> {
            Thread t = new Thread(r, "fenceline-stat");
            t.setDaemon(true);
            return t;
        });
        this.atExit = new Thread(() -> {
            try {
                Files.deleteIfExists(file);
            } catch (IOException e) {
                // the next runtime in this directory removes it
            }
        }, "fenceline-stat-exit");
        Runtime.getRuntime().addShutdownHook(atExit);
        thread.scheduleWithFixedDelay(this::publishLogged, 0, intervalMillis, TimeUnit.MILLISECONDS);
    }

    /**
     * @param settings the {@code fenceline.stat} settings
     * @param workers the runtime's open workers, asked at each update
     * @return the publisher, or null if publishing is off or the file could not be made (logged)
     */
    public static StatPublisher start(FencelineSettings.Stat settings, Supplier<? extends Collection<Worker>> workers) {
        if (!settings.enabled()) {
            return null;
        }
        Path dir = settings.directory().isEmpty() ? StatLayout.defaultDirectory() : Path.of(settings.directory());
        Path file = dir.resolve(ProcessHandle.current().pid() + "-" + SEQUENCE.incrementAndGet() + StatLayout.SUFFIX);
        try {
            createPrivateDirectory(dir);
            removeStale(dir);
            long length = StatLayout.fileLength(settings.counters());
            MappedByteBuffer mapped;
            try (FileChannel ch = FileChannel.open(file, StandardOpenOption.CREATE_NEW, StandardOpenOption.READ,
                    StandardOpenOption.WRITE)) {
                ch.truncate(length);
                mapped = ch.map(FileChannel.MapMode.READ_WRITE, 0, length);
            }
            return new StatPublisher(file, mapped, settings.counters(), settings.interval().toMillis(), workers);
        } catch (IOException | RuntimeException e) {
            LOG.warn("no counters file for fenceline stat at {}: {}", file, e.toString());
            return null;
        }
    }

    /** The directory may hold worker names: only its owner may look in. */
    private static void createPrivateDirectory(Path dir) throws IOException {
        if (Files.isDirectory(dir)) {
            return;
        }
        try {
            Files.createDirectories(dir.getParent());
            Files.createDirectory(dir, PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rwx------")));
        } catch (FileAlreadyExistsException e) {
            // another runtime made it first
        } catch (UnsupportedOperationException e) {
            Files.createDirectories(dir);
        }
    }

    /** Files of processes that are gone (killed before they could remove theirs). */
    private static void removeStale(Path dir) throws IOException {
        try (Stream<Path> files = Files.list(dir)) {
            for (Path p : (Iterable<Path>) files::iterator) {
                long pid = StatLayout.pidOf(p);
                if (pid > 0 && !ProcessHandle.of(pid).map(ProcessHandle::isAlive).orElse(false)) {
                    Files.deleteIfExists(p);
                }
            }
        }
    }

    /** @return the file it writes */
    public Path file() {
        return file;
    }

    private void publishLogged() {
        try {
            publish();
        } catch (RuntimeException e) {
            LOG.warn("updating counters file {}: {}", file, e.toString());
        }
    }

    private void publish() {
        Map<Worker, Boolean> seenWorkers = new IdentityHashMap<>();
        // Only the endpoints that hold slots are remembered as seen: with ten thousand endpoints and
        // a file of a thousand counters, a map of every endpoint was most of this method's work.
        Map<Endpoint, Boolean> seenEndpoints = new IdentityHashMap<>(endpointSlots.size());
        // A full file takes no new endpoint: while it stays full, only the endpoints holding slots are
        // visited, not every endpoint of every worker (a copy of the list and a lookup each).
        boolean full = warnedFull && freeCount < ENDPOINT.length;
        for (Worker w : workers.get()) {
            seenWorkers.put(w, Boolean.TRUE);
            int[] slots = workerSlots.computeIfAbsent(w, x -> allocate(WORKER, "worker " + x.name(), x.name()));
            if (slots != null) {
                WorkerStatistics s = w.statistics();
                long[] v = {s.operations(), s.completed(), s.failed(), s.outstanding(), s.flushes(), s.strongFences(),
                    s.reconfigurations(), s.restarts(), s.direct(), s.openEndpoints()};
                set(slots, v);
            }
            if (full) {
                continue; // below
            }
            for (Endpoint e : w.endpoints()) {
                int[] es = endpointSlots.get(e);
                if (es == null && freeCount < ENDPOINT.length && warnedFull) {
                    continue; // left out: its statistics are not even taken (10,000 endpoints cost a core's 4 %)
                }
                EndpointStatistics s = e.statistics();
                if (es == null) {
                    es = allocate(ENDPOINT, "endpoint " + s.endpoint(), s.endpoint());
                    if (es != null) {
                        endpointSlots.put(e, es);
                    }
                }
                if (es != null) {
                    seenEndpoints.put(e, Boolean.TRUE);
                    publish(es, s);
                }
            }
        }
        if (full) {
            for (Map.Entry<Endpoint, int[]> held : endpointSlots.entrySet()) {
                Endpoint e = held.getKey();
                // Its worker forgets it when it closes (a closed worker closes its endpoints first).
                if (!(e instanceof EndpointImpl i) || !i.isForgotten()) {
                    seenEndpoints.put(e, Boolean.TRUE);
                    publish(held.getValue(), e.statistics());
                }
            }
        }
        release(workerSlots, seenWorkers);
        release(endpointSlots, seenEndpoints);
        StatLayout.LONG.setRelease(buffer, StatLayout.UPDATED_OFFSET, System.currentTimeMillis());
    }

    private void publish(int[] slots, EndpointStatistics s) {
        long bytes = 0;
        long live = 0;
        for (LaneStatistics l : s.lanes()) {
            bytes += l.bytes();
            live += l.live() ? 1 : 0;
        }
        set(slots, new long[] {s.operations(), s.outstanding(), s.failed(), bytes, live, s.flushLatency().p99() / 1_000});
    }

    private void set(int[] slots, long[] values) {
        for (int i = 0; i < slots.length; i++) {
            StatLayout.LONG.setRelease(buffer, StatLayout.record(slots[i]) + StatLayout.VALUE_OFFSET, values[i]);
        }
    }

    private <K> void release(Map<K, int[]> slots, Map<K, Boolean> seen) {
        slots.entrySet().removeIf(e -> {
            if (seen.containsKey(e.getKey())) {
                return false;
            }
            free(e.getValue());
            return true;
        });
    }

    /** @return one counter per kind, or null (left out, logged once) when the file is full */
    private int[] allocate(StatCounter[] kinds, String label, String owner) {
        if (freeCount < kinds.length) {
            if (!warnedFull) {
                warnedFull = true;
                LOG.warn("counters file {} is full ({} counters): {} and later ones are left out; raise"
                        + " fenceline.stat.counters", file, capacity, label);
            }
            return null;
        }
        byte[] name = owner.getBytes(StandardCharsets.UTF_8);
        int n = Math.min(name.length, StatLayout.MAX_OWNER_BYTES);
        int[] slots = new int[kinds.length];
        for (int i = 0; i < kinds.length; i++) {
            int slot = free[--freeCount];
            int r = StatLayout.record(slot);
            // A reader that saw the old owner sees the generation move and skips the record.
            StatLayout.INT.setVolatile(buffer, r + StatLayout.GENERATION_OFFSET,
                    buffer.getInt(r + StatLayout.GENERATION_OFFSET) + 1);
            buffer.putInt(r + StatLayout.TYPE_OFFSET, kinds[i].typeId());
            buffer.putInt(r + StatLayout.OWNER_LENGTH_OFFSET, n);
            buffer.put(r + StatLayout.OWNER_OFFSET, name, 0, n);
            buffer.putLong(r + StatLayout.VALUE_OFFSET, 0);
            StatLayout.INT.setVolatile(buffer, r + StatLayout.STATE_OFFSET, StatLayout.IN_USE);
            slots[i] = slot;
        }
        return slots;
    }

    private void free(int[] slots) {
        if (slots != null) {
            for (int s : slots) {
                StatLayout.INT.setVolatile(buffer, StatLayout.record(s) + StatLayout.STATE_OFFSET, 0);
                free[freeCount++] = s;
            }
        }
    }

    /**
     * Stops publishing and removes the file, on the publisher's own thread after any update in progress.
     *
     * @return completes when the file is gone (never exceptionally); the same stage on every call
     */
    public synchronized CompletionStage<Void> close() {
        if (!thread.isShutdown()) {
            thread.execute(() -> {
                try {
                    StatLayout.INT.setVolatile(buffer, StatLayout.MAGIC_OFFSET, 0); // a late reader is told it is gone
                    Files.deleteIfExists(file); // the mapping goes with the buffer
                    Runtime.getRuntime().removeShutdownHook(atExit);
                } catch (IllegalStateException e) {
                    // the JVM is exiting: its hook removes the file
                } catch (IOException | RuntimeException e) {
                    LOG.warn("removing counters file {}: {}", file, e.toString());
                } finally {
                    closed.complete(null);
                }
            });
            thread.shutdown(); // the periodic update does not run again; the task above still does
        }
        return closed;
    }
}
