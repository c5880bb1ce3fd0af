package dev.fenceline.internal;

import com.typesafe.config.Config;
import dev.fenceline.ConfigurationException;
import dev.fenceline.spi.support.ConfigReader;
import java.time.Duration;
import java.util.HashSet;
import java.util.List;
import java.util.Set;

/**
 * Every {@code fenceline.*} key of the runtime, read and validated once. Transports read their own
 * section, {@code fenceline.transport.<name>}. Defaults live only in {@code reference.conf}.
 *
 * @param transports enabled transports, in order of preference ({@link #AUTO} until resolved)
 * @param lanesFromEveryTransport whether an endpoint takes lanes from every transport both workers
 *     offer (true) or only from the first (false)
 * @param fenceMode the resolved fence mode
 * @param errorMode what a lane failure does
 * @param connectTimeout how long connecting an endpoint may take
 * @param submitBatch how many submitted operations an endpoint takes per mailbox turn
 * @param keepaliveInterval idle time after which a lane is probed; zero disables keepalive
 * @param keepaliveTimeout how long a probe may stay unanswered before the lane fails
 * @param keepaliveIdleInterval idle time after which a lane is probed while nothing waits for the
 *     endpoint's lanes (never shorter than {@code keepaliveInterval})
 * @param shortMax RMA up to this size prefers an RMA lane
 * @param bandwidthThreshold RMA from this size prefers an RMA_BW lane
 * @param fragmentSize the largest single transport operation
 * @param jmx whether each worker registers a JMX bean
 * @param handlerTimeBound an active-message handler call longer than this is reported; zero for none
 * @param stat where and how often the process's counters are published for {@code fenceline stat}
 * @param actors where the runtime's actors run and how they end with their actor system
 * @param progress how the transports' progress agents get threads
 * @param exactlyOnce the worker's exactly-once windows, shared by its transports
 * @param keysRead every key read, for the completeness test
 */
public record FencelineSettings(List<String> transports, boolean lanesFromEveryTransport, FenceMode fenceMode, ErrorMode errorMode,
        Duration connectTimeout, int submitBatch, Duration keepaliveInterval, Duration keepaliveTimeout, Duration keepaliveIdleInterval, long shortMax, long bandwidthThreshold, int fragmentSize,
        boolean jmx, Duration handlerTimeBound, Stat stat, Actors actors, Progress progress, ExactlyOnce exactlyOnce,
        Set<String> keysRead) {

    /**
     * {@code fenceline.exactly-once}: each worker's windows, shared by its transports.
     *
     * @param window how far past its oldest incomplete operation one origin endpoint may run
     * @param linger how long a window outlives the last connection that carried its origin
     * @param entriesPerPeer the most entries one peer's windows hold together
     * @param entries the most entries all of a worker's windows hold together
     */
    public record ExactlyOnce(int window, Duration linger, long entriesPerPeer, long entries) {
        /**
         * @param worker the worker's name, for refusals
         * @param clock the time the linger is measured in: the worker's actors' (virtual under a
         *     deterministic simulation, where real time would keep windows past their linger)
         * @return new windows for one worker
         */
        public dev.fenceline.spi.support.ExactlyOnceWindows newWindows(String worker,
                java.util.function.LongSupplier clock) {
            return new dev.fenceline.spi.support.ExactlyOnceWindows("worker '" + worker + "'", window, linger,
                    entriesPerPeer, entries, clock);
        }
    }

    /**
     * {@code fenceline.progress}.
     *
     * @param threading dedicated or shared
     * @param idleStrategy the shared thread's: backoff, yield, busy-spin or sleep
     * @param parkMin the backoff strategy's shortest park
     * @param parkMax the backoff strategy's longest park, and the sleep strategy's park
     */
    public record Progress(dev.fenceline.spi.support.ProgressRunners.Threading threading, String idleStrategy,
            Duration parkMin, Duration parkMax) {
        /** @return a new idle strategy for the shared thread */
        public org.agrona.concurrent.IdleStrategy newIdleStrategy() {
            return switch (idleStrategy) {
                case "busy-spin" -> new org.agrona.concurrent.BusySpinIdleStrategy();
                case "yield" -> new org.agrona.concurrent.YieldingIdleStrategy();
                case "sleep" -> new org.agrona.concurrent.SleepingIdleStrategy(parkMax.toNanos());
                default -> new org.agrona.concurrent.BackoffIdleStrategy(100, 10, parkMin.toNanos(), parkMax.toNanos());
            };
        }
    }

    /**
     * The runtime's actors in their actor system.
     *
     * @param dispatcher the dispatcher id the worker and endpoint actors run on; empty for the
     *     actor system's default dispatcher
     * @param coordinatedShutdown whether the runtime joins the actor system's coordinated shutdown
     *     (endpoints flushed when service requests are done, workers closed at service stop)
     */
    public record Actors(String dispatcher, boolean coordinatedShutdown) {
    }

    /**
     * The counters file that {@code fenceline stat} reads.
     *
     * @param enabled whether the runtime publishes one
     * @param directory where; empty for {@link StatLayout#defaultDirectory()}
     * @param interval how often the counters are brought up to date
     * @param counters how many counters the file holds
     */
    public record Stat(boolean enabled, String directory, Duration interval, int counters) {
    }

    /** The value of {@code fenceline.transports} that means: every transport on the class path. */
    public static final String AUTO = "auto";

    /** The order {@code auto} prefers, among the transports found; others follow by name, sim last. */
    private static final List<String> AUTO_ORDER = List.of("ucx", "shm", "tcp");

    /**
     * Resolves {@code fenceline.transports = auto}: every transport on the class path, the real ones
     * in a fixed order of preference (ucx, shm, tcp, then any other by name); the test kit's
     * simulated one only when there is no other.
     *
     * @param found the names of the transport providers on the class path
     * @return the settings with the transports to enable (these settings if not auto)
     */
    public FencelineSettings resolveTransports(java.util.Collection<String> found) {
        if (!transports.equals(List.of(AUTO))) {
            return this;
        }
        java.util.List<String> chosen = new java.util.ArrayList<>();
        for (String t : AUTO_ORDER) {
            if (found.contains(t)) {
                chosen.add(t);
            }
        }
        new java.util.TreeSet<>(found).stream().filter(t -> !chosen.contains(t) && !t.equals("sim"))
                .forEach(chosen::add);
        if (chosen.isEmpty() && found.contains("sim")) {
            chosen.add("sim");
        }
        if (chosen.isEmpty()) {
            throw new ConfigurationException("fenceline.transports = auto, but no transport provider is on the class"
                    + " path: add fenceline-transport-shm, fenceline-transport-tcp (or, for tests, fenceline-testkit)");
        }
        return new FencelineSettings(List.copyOf(chosen), lanesFromEveryTransport, fenceMode, errorMode, connectTimeout, submitBatch,
                keepaliveInterval, keepaliveTimeout, keepaliveIdleInterval, shortMax, bandwidthThreshold, fragmentSize, jmx, handlerTimeBound,
                stat, actors, progress, exactlyOnce, keysRead);
    }

    /**
     * Leaves out the transports that cannot run in this process: a list that names one of them goes
     * on without it (the caller warns), unless none of its transports can run.
     *
     * @param unavailable why each transport that cannot run cannot, by name
     * @return the settings without those transports (these settings if none is named)
     * @throws ConfigurationException if every named transport is unavailable
     */
    public FencelineSettings withoutUnavailable(java.util.Map<String, String> unavailable) {
        if (transports.equals(List.of(AUTO)) || transports.stream().noneMatch(unavailable::containsKey)) {
            return this;
        }
        List<String> left = transports.stream().filter(t -> !unavailable.containsKey(t)).toList();
        if (left.isEmpty()) {
            StringBuilder why = new StringBuilder();
            transports.forEach(t -> why.append("; ").append(t).append(": ").append(unavailable.get(t)));
            throw new ConfigurationException("fenceline.transports = " + transports + ", but none of them can run in"
                    + " this process" + why);
        }
        return new FencelineSettings(left, lanesFromEveryTransport, fenceMode, errorMode, connectTimeout, submitBatch,
                keepaliveInterval, keepaliveTimeout, keepaliveIdleInterval, shortMax, bandwidthThreshold, fragmentSize, jmx, handlerTimeBound,
                stat, actors, progress, exactlyOnce, keysRead);
    }

    /**
     * @param root the whole configuration (with reference.conf)
     * @return validated settings
     * @throws ConfigurationException naming the first bad key and value
     */
    public static FencelineSettings fromConfig(Config root) {
        ConfigReader r = new ConfigReader(root, "fenceline");
        boolean auto = root.hasPath("fenceline.transports")
                && root.getValue("fenceline.transports").valueType() == com.typesafe.config.ConfigValueType.STRING;
        if (auto && !r.string("transports").equals(AUTO)) {
            throw r.invalid("transports", r.string("transports"), "auto, or a list of transport names");
        }
        List<String> transports = auto ? List.of(AUTO) : r.stringList("transports");
        if (transports.isEmpty()) {
            throw r.invalid("transports", "[]", "at least one transport name");
        }
        if (new HashSet<>(transports).size() != transports.size()) {
            throw r.invalid("transports", transports.toString(), "distinct transport names");
        }
        FenceMode fence = switch (r.oneOf("fence.mode", List.of("auto", "weak", "strong", "endpoint"))) {
            case "weak" -> FenceMode.WEAK;
            case "strong" -> FenceMode.STRONG;
            default -> FenceMode.ENDPOINT; // auto resolves to endpoint, UCX's ep_based
        };
        ErrorMode error = ErrorMode.valueOf(
                r.oneOf("endpoint.error-mode", List.of("none", "peer", "failover")).toUpperCase(java.util.Locale.ROOT));
        Duration connectTimeout = r.durationIn("endpoint.connect-timeout", Duration.ofMillis(1), Duration.ofHours(1));
        int submitBatch = r.intIn("endpoint.submit-batch", 1, 1 << 16);
        Duration keepalive = r.durationIn("endpoint.keepalive.interval", Duration.ZERO, Duration.ofHours(1));
        if (!keepalive.isZero() && keepalive.toMillis() < 1) {
            throw r.invalid("endpoint.keepalive.interval", keepalive.toString(), "0 (off) or at least 1ms");
        }
        Duration keepaliveTimeout = r.durationIn("endpoint.keepalive.timeout", Duration.ofMillis(1),
                Duration.ofHours(1));
        Duration keepaliveIdle = r.durationIn("endpoint.keepalive.idle-interval", Duration.ofMillis(1),
                Duration.ofHours(1));
        long shortMax = r.bytesIn("protocol.short-max", 0, 1 << 20);
        long bw = r.bytesIn("protocol.bandwidth-threshold", 1, 1L << 30);
        if (bw <= shortMax) {
            throw r.invalid("protocol.bandwidth-threshold", Long.toString(bw),
                    "more than fenceline.protocol.short-max (" + shortMax + ")");
        }
        int fragment = (int) r.bytesIn("protocol.fragment-size", 64, 1 << 30);
        r.oneOf("unknown-keys", List.of("error", "warn", "ignore")); // ConfigKeys acts on it
        boolean jmx = r.bool("jmx.enabled");
        Duration handlerBound = r.durationIn("active-message.handler-time-bound", Duration.ZERO, Duration.ofHours(1));
        Stat stat = new Stat(r.bool("stat.enabled"), r.string("stat.directory"),
                r.durationIn("stat.interval", Duration.ofMillis(10), Duration.ofHours(1)),
                r.intIn("stat.counters", 64, 1 << 20));
        String dispatcher = r.string("dispatcher").trim();
        if (!dispatcher.isEmpty() && !dispatcherAt(root, dispatcher)) {
            throw r.invalid("dispatcher", dispatcher, "empty (the actor system's default dispatcher) or the path of a"
                    + " dispatcher's configuration, outside the fenceline section (there is no object at " + dispatcher
                    + " outside it)");
        }
        Actors actors = new Actors(dispatcher, r.bool("coordinated-shutdown"));
        Duration parkMin = r.durationIn("progress.idle-park-min", Duration.ofNanos(1), Duration.ofMillis(1));
        Progress progress = new Progress(r.oneOf("progress.threading", List.of("dedicated", "shared")).equals("shared")
                ? dev.fenceline.spi.support.ProgressRunners.Threading.SHARED
                : dev.fenceline.spi.support.ProgressRunners.Threading.DEDICATED,
                r.oneOf("progress.idle-strategy", List.of("backoff", "yield", "busy-spin", "sleep")), parkMin,
                r.durationIn("progress.idle-park-max", parkMin, Duration.ofSeconds(1)));
        boolean every = r.oneOf("endpoint.lane-transports", List.of("all", "first")).equals("all");
        long perPeer = r.longValue("exactly-once.entries-per-peer");
        if (perPeer < 1024 || perPeer > 1L << 32) {
            throw r.invalid("exactly-once.entries-per-peer", Long.toString(perPeer), "an integer in [1024, 2^32]");
        }
        long entries = r.longValue("exactly-once.entries");
        if (entries < perPeer || entries > 1L << 36) {
            throw r.invalid("exactly-once.entries", Long.toString(entries), "an integer in [entries-per-peer = "
                    + perPeer + ", 2^36]");
        }
        int window = r.intIn("exactly-once.window", 16, 1 << 26);
        // Each fragment of a put is numbered, and the mark moves only when the whole put is done: a
        // window smaller than the largest put's fragments refuses the tail of such a put, after its
        // head was applied.
        long largestPut = (Integer.MAX_VALUE + (long) fragment - 1) / fragment;
        if (window < largestPut) {
            throw r.invalid("exactly-once.window", Integer.toString(window), "at least " + largestPut + ", the"
                    + " fragments of the largest put (2 GiB) at fenceline.protocol.fragment-size = " + fragment);
        }
        ExactlyOnce once = new ExactlyOnce(window,
                r.durationIn("exactly-once.linger", Duration.ofSeconds(1), Duration.ofDays(1)), perPeer, entries);
        return new FencelineSettings(List.copyOf(transports), every, fence, error, connectTimeout, submitBatch, keepalive,
                keepaliveTimeout, keepaliveIdle, shortMax, bw, fragment, jmx, handlerBound, stat, actors, progress, once, r.keysRead());
    }

    /** Whether {@code path} names an object outside the fenceline section (a malformed path does not). */
    private static boolean dispatcherAt(Config root, String path) {
        if (path.equals("fenceline") || path.startsWith("fenceline.")) {
            return false;
        }
        try {
            return root.hasPath(path) && root.getValue(path).valueType() == com.typesafe.config.ConfigValueType.OBJECT;
        } catch (com.typesafe.config.ConfigException e) {
            return false; // not a path: "a..b", "a."
        }
    }
}
