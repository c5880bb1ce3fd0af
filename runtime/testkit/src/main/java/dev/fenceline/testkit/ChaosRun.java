package dev.fenceline.testkit;

import com.typesafe.config.ConfigFactory;
import dev.fenceline.Endpoint;
import dev.fenceline.Fenceline;
import dev.fenceline.LaneInfo;
import dev.fenceline.LaneType;
import dev.fenceline.MemoryRegion;
import dev.fenceline.Worker;
import dev.fenceline.WorkerStatistics;
import dev.fenceline.testkit.history.History;
import dev.fenceline.testkit.history.HistoryChecker;
import java.time.Duration;
import java.util.ArrayList;
import java.util.EnumSet;
import java.util.List;
import java.util.Locale;
import java.util.SplittableRandom;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;

/**
 * One chaos case: several endpoints run model-checked workloads (puts, gets, atomics, active
 * messages, fences, flushes) while a seeded scheduler fails, stalls, replaces, recovers and adds
 * lanes and changes their delays. Everything the workloads check must hold, and every request must complete
 * exactly once without an error (failover hides lane failures while a live lane remains; the
 * scheduler never fails the last one). A seed fixes the workloads, the lanes' delays and the fault
 * schedule; the threads' timing is the machine's (the workloads run on threads of their own, on real
 * time), so a failure that hangs on an interleaving may need its case run a few times to repeat.
 * Where a case must repeat exactly, {@link DeterministicSimulation} runs the runtime on one thread.
 */
public final class ChaosRun {
    private static final int SLICE = 32 * 1024;
    private static final int COUNTERS = 8;
    /** Past a stall's end, for the copies it held to land (a lane's delay is at most 200 us). */
    private static final long LATE_MARGIN_NANOS = TimeUnit.MILLISECONDS.toNanos(20);
    /**
     * Three software lanes. Every other pair of seeds makes them not revocable (so both fence modes,
     * which the chaos test alternates by seed, meet both kinds): a stalled target then takes the copies
     * that waited for it even after the endpoint gave the lane up, and only the target's exactly-once
     * window keeps them from being applied twice or late (tcp's case); the others let the endpoint
     * withdraw them (shm's).
     */
    private static String lanes(long seed) {
        String r = (seed >> 1) % 2 == 0 ? "" : ", revocable = off";
        // sim by name: on a class path with real transports too (bin/fenceline's), auto would pick those.
        return "fenceline.transports = [sim]\nfenceline.transport.sim.lanes = ["
                + "{ types = [AM, RMA, AMO], min-delay = 0us, max-delay = 60us" + r + " },"
                + "{ types = [AM, RMA_BW, AMO], min-delay = 0us, max-delay = 60us" + r + " },"
                + "{ types = [AM, RMA, RMA_BW, AMO], min-delay = 0us, max-delay = 60us" + r + " } ]";
    }

    /**
     * @param seed seeds the workloads, the lanes' delays and the fault schedule
     * @param ops operations over all endpoints
     * @param reconfigs lane changes to inject
     * @param endpoints endpoints (each with its own workload thread)
     * @param fenceMode endpoint or strong
     */
    public record Options(long seed, int ops, int reconfigs, int endpoints, String fenceMode) {
        /**
         * Checks the bounds.
         *
         * @param seed the seed
         * @param ops operations, at least 1
         * @param reconfigs lane changes, at least 0
         * @param endpoints endpoints, 1 to 16
         * @param fenceMode endpoint or strong
         */
        public Options {
            if (ops < 1 || reconfigs < 0 || endpoints < 1 || endpoints > 16) {
                throw new IllegalArgumentException("ops " + ops + " >= 1, reconfigs " + reconfigs + " >= 0, endpoints "
                        + endpoints + " in [1, 16]");
            }
            if (!fenceMode.equals("endpoint") && !fenceMode.equals("strong")) {
                throw new IllegalArgumentException("fence mode " + fenceMode + ": endpoint or strong");
            }
        }
    }

    /**
     * What happened.
     *
     * @param options the case
     * @param failures lanes failed
     * @param replacements lanes replaced
     * @param recoveries lanes recovered
     * @param additions lanes added
     * @param stalls of the failures, those of a stalled target, whose waiting copies arrived later
     * @param stats the origin worker's counters at the end
     * @param errors what did not hold (empty when all did)
     * @param elapsed wall time
     */
    public record Report(Options options, int failures, int replacements, int recoveries, int additions,
            int stalls, WorkerStatistics stats, List<String> errors, Duration elapsed) {
        /** @return whether every check held */
        public boolean ok() {
            return errors.isEmpty();
        }

        /** @return the command that runs this case again (the same seed: see the class comment) */
        public String reproduce() {
            return String.format(Locale.ROOT, "bin/fenceline chaos --seed %d --ops %d --reconfigs %d --endpoints %d"
                    + " --fence-mode %s", options.seed, options.ops, options.reconfigs, options.endpoints,
                    options.fenceMode);
        }

        /** @return the report as one JSON object */
        public String toJson() {
            StringBuilder e = new StringBuilder("[");
            for (int i = 0; i < errors.size(); i++) {
                e.append(i > 0 ? "," : "").append('"').append(errors.get(i).replace("\\", "\\\\").replace("\"", "\\\""))
                        .append('"');
            }
            e.append(']');
            return String.format(Locale.ROOT, "{\"seed\":%d,\"ops\":%d,\"reconfigs\":%d,\"endpoints\":%d,"
                    + "\"fenceMode\":\"%s\",\"ok\":%b,\"failures\":%d,\"replacements\":%d,\"recoveries\":%d,"
                    + "\"additions\":%d,\"stalls\":%d,\"reconfigurations\":%d,\"restarts\":%d,\"operations\":%d,\"completed\":%d,"
                    + "\"failed\":%d,\"strongFences\":%d,\"weakFences\":%d,\"elapsedMs\":%d,\"errors\":%s,"
                    + "\"reproduce\":\"%s\"}", options.seed, options.ops, options.reconfigs, options.endpoints,
                    options.fenceMode, ok(), failures, replacements, recoveries, additions, stalls, stats.reconfigurations(),
                    stats.restarts(), stats.operations(), stats.completed(), stats.failed(), stats.strongFences(),
                    stats.weakFences(), elapsed.toMillis(), e, reproduce());
        }
    }

    private ChaosRun() {
    }

    /**
     * Runs one case.
     *
     * @param o the case
     * @return what happened
     * @throws Exception if the runtime could not start
     */
    public static Report run(Options o) throws Exception {
        long start = System.nanoTime();
        List<String> errors = new ArrayList<>();
        int[] counts = new int[5];
        WorkerStatistics stats;
        try (Fenceline f = Fenceline.create(ConfigFactory.parseString(lanes(o.seed()) + "\nfenceline.fence.mode = "
                + o.fenceMode() + "\nfenceline.transport.sim.seed = " + o.seed()))) {
            Worker a = f.newWorker("chaos-origin").toCompletableFuture().get(10, TimeUnit.SECONDS);
            Worker b = f.newWorker("chaos-target").toCompletableFuture().get(10, TimeUnit.SECONDS);
            MemoryRegion data = b.allocate((long) o.endpoints() * SLICE);
            MemoryRegion counters = b.allocate((long) o.endpoints() * COUNTERS * 8);
            List<Endpoint> eps = new ArrayList<>();
            List<ModelCheckedWorkload> workloads = new ArrayList<>();
            History history = new History();
            for (int e = 0; e < o.endpoints(); e++) {
                Endpoint ep = a.connect(b.address()).toCompletableFuture().get(10, TimeUnit.SECONDS);
                eps.add(ep);
                // The workload checks against its own sequential model; the recorded history is checked
                // independently afterwards.
                ModelCheckedWorkload w = new ModelCheckedWorkload(history.record(ep), new ModelCheckedWorkload.Options(data,
                        data.remoteKey(), e * SLICE, SLICE, counters, counters.remoteKey(), e * COUNTERS, COUNTERS,
                        1000 + e, o.seed() * 7919 + e, 16, true));
                b.setActiveMessageHandler(1000 + e, w.activeMessageHandler());
                workloads.add(w);
            }
            SimNetwork net = SimNetwork.of(f);
            ExecutorService pool = Executors.newFixedThreadPool(o.endpoints());
            try {
                List<Future<ModelCheckedWorkload.Result>> results = new ArrayList<>();
                for (ModelCheckedWorkload w : workloads) {
                    results.add(pool.submit(() -> w.run(Math.max(1, o.ops() / o.endpoints()))));
                }
                long lateUntil = inject(o, eps, net, results, counts);
                for (Future<ModelCheckedWorkload.Result> r : results) {
                    errors.addAll(r.get(120, TimeUnit.SECONDS).errors());
                }
                // A stalled lane's copies land when its stall ends, though the endpoint gave the lane
                // up: the checks wait for the last of them, so that a late one is judged too.
                for (long left; (left = lateUntil - System.nanoTime()) > 0;) {
                    LockSupport.parkNanos(left);
                }
            } finally {
                pool.shutdownNow();
            }
            for (Endpoint ep : eps) {
                try {
                    ep.flush().toCompletableFuture().get(30, TimeUnit.SECONDS);
                } catch (java.util.concurrent.ExecutionException e) {
                    errors.add("final flush of " + ep + " failed: " + e.getCause());
                }
            }
            try {
                check(history, address -> word(address, counters, data));
            } catch (AssertionError e) {
                errors.add("history: " + e.getMessage());
            }
            stats = a.statistics();
            if (stats.failed() != 0) {
                errors.add(stats.failed() + " requests failed although a live lane always remained");
            }
            if (stats.outstanding() != 0) {
                errors.add(stats.outstanding() + " requests never completed");
            }
        }
        return new Report(o, counts[0], counts[1], counts[2], counts[3], counts[4], stats, List.copyOf(errors),
                Duration.ofNanos(System.nanoTime() - start));
    }

    /**
     * The checks of a chaos run's history: every request completed, flushes covered what came before
     * them, fences held, failures told the truth, and each atomic and fragment applied once.
     *
     * @param history the recorded history, everything flushed and every late copy landed
     * @param finalValue reads a word of the target's memory by its address
     * @throws AssertionError naming each violation
     */
    public static void check(History history, java.util.function.LongUnaryOperator finalValue) {
        HistoryChecker.of(history).assertEveryRequestCompleted().assertFlushesCovered().assertFencesHeld()
                .assertOutcomesTruthful().assertExactlyOnce(finalValue);
    }

    private static long word(long address, MemoryRegion counters, MemoryRegion data) {
        MemoryRegion r = address >= counters.address() && address < counters.address() + counters.length()
                ? counters : data;
        return r.buffer().order(java.nio.ByteOrder.nativeOrder()).getLong((int) (address - r.address()));
    }

    /**
     * The fault schedule: seeded choices, spread over the workloads' run time.
     *
     * @return until when ({@link System#nanoTime}) a stalled lane may still deliver late copies
     */
    private static long inject(Options o, List<Endpoint> eps, SimNetwork net,
            List<Future<ModelCheckedWorkload.Result>> results, int[] counts) {
        SplittableRandom rnd = new SplittableRandom(o.seed() ^ 0x5DEECE66DL);
        long lateUntil = System.nanoTime();
        for (int k = 0; k < o.reconfigs() && !results.stream().allMatch(Future::isDone); k++) {
            LockSupport.parkNanos(50_000 + rnd.nextLong(400_000));
            Endpoint ep = eps.get(rnd.nextInt(eps.size()));
            List<LaneInfo> lanes = ep.lanes();
            long generation = lanes.isEmpty() ? 0 : lanes.get(0).generation();
            List<Integer> live = lanes.stream().filter(LaneInfo::live).map(LaneInfo::index).toList();
            List<Integer> dead = lanes.stream().filter(l -> !l.live()).map(LaneInfo::index).toList();
            int action = rnd.nextInt(100);
            boolean topology = true;
            try {
                if (action < 25 && live.size() >= 2) {
                    net.failLane(ep, live.get(rnd.nextInt(live.size())));
                    counts[0]++;
                } else if (action < 35 && live.size() >= 2) {
                    // A stalled target, given up as keepalive would: what waited for it arrives later.
                    int lane = live.get(rnd.nextInt(live.size()));
                    long stall = 200_000 + rnd.nextLong(3_000_000);
                    net.stallLane(ep, lane, Duration.ofNanos(stall));
                    lateUntil = Math.max(lateUntil, System.nanoTime() + stall + LATE_MARGIN_NANOS);
                    net.failLane(ep, lane);
                    counts[0]++;
                    counts[4]++;
                } else if (action < 65 && !live.isEmpty()) {
                    net.replaceLane(ep, live.get(rnd.nextInt(live.size())));
                    counts[1]++;
                } else if (action < 90 && !dead.isEmpty()) {
                    net.recoverLane(ep, dead.get(rnd.nextInt(dead.size())));
                    counts[2]++;
                } else if (action < 95 && lanes.size() < 6) {
                    net.addLane(ep, EnumSet.of(LaneType.AM, LaneType.RMA, LaneType.RMA_BW, LaneType.AMO));
                    counts[3]++;
                } else if (!live.isEmpty()) {
                    int lane = live.get(rnd.nextInt(live.size()));
                    long max = rnd.nextLong(200);
                    net.setDelay(ep, lane, Duration.ZERO, Duration.ofNanos(max * 1000));
                    topology = false;
                } else {
                    topology = false;
                }
            } catch (IllegalStateException | IllegalArgumentException raced) {
                topology = false; // the lane changed between the snapshot and the injection
            }
            if (topology) {
                awaitApplied(ep, generation);
            }
        }
        return lateUntil;
    }

    /**
     * Waits (briefly) until the endpoint applied the change, so the next choice sees the real lane
     * table and never fails the last live lane by accident.
     */
    private static void awaitApplied(Endpoint ep, long generation) {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(2);
        while (System.nanoTime() < deadline) {
            List<LaneInfo> now = ep.lanes();
            if (now.isEmpty() || now.get(0).generation() != generation) {
                return;
            }
            LockSupport.parkNanos(20_000);
        }
    }
}
