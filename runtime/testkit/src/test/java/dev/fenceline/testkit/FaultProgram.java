package dev.fenceline.testkit;

import dev.fenceline.AtomicOp;
import dev.fenceline.Endpoint;
import dev.fenceline.LaneInfo;
import dev.fenceline.LaneType;
import dev.fenceline.MemoryRegion;
import dev.fenceline.RemoteKey;
import dev.fenceline.Worker;
import dev.fenceline.testkit.history.History;
import dev.fenceline.testkit.history.HistoryChecker;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.time.Duration;
import java.util.ArrayList;
import java.util.EnumSet;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * One program of operations, fences and lane events, run in order on a fresh endpoint to a fresh
 * target worker of a deterministic simulation, then checked: every request completed, with a
 * result or a typed error; fences held, stale copies included; flushes covered what came before
 * them; no failure said "not applied" of something applied; every ADD and every message applied at
 * most once, and exactly once where it succeeded. The fault matrix and the exhaustive exploration
 * run these.
 */
final class FaultProgram {
    /** What a step does. */
    enum Kind {
        PUT, GET, ADD, FETCH_ADD, MESSAGE, FLUSH, FENCE,
        /** Virtual time passes ({@code arg} microseconds): some copies arrive, some answers are still on their way. */
        WAIT,
        /** The lane fails. */
        FAIL,
        /** The lane's target stalls past keepalive's timeout, then takes what waited. */
        STALL,
        /** The transport puts a new connection behind the lane. */
        REPLACE,
        /** A failed lane comes back. */
        RECOVER,
        /** Another lane is added. */
        ADD_LANE,
        /** The target worker closes. */
        KILL;

        boolean isFault() {
            return ordinal() >= FAIL.ordinal();
        }
    }

    /**
     * @param kind what it does
     * @param arg the word an operation touches (0 to 3), or the lane a fault hits
     */
    record Step(Kind kind, int arg) {
        @Override
        public String toString() {
            return kind == Kind.WAIT ? "WAIT(" + arg + "us)"
                    : kind.isFault() && kind != Kind.ADD_LANE && kind != Kind.KILL ? kind + "(" + arg + ")"
                    : kind == Kind.FENCE || kind == Kind.FLUSH || kind.isFault() ? kind.toString() : kind + "" + arg;
        }
    }

    private static final int MESSAGE_ID = 31;
    private static final int COUNTERS = 512;

    private final DeterministicSimulation sim;
    private final Worker origin;
    private final AtomicInteger runs = new AtomicInteger();
    private long unknown;
    /** Active messages run, by (run, step): each at most once. */
    private final Map<Long, AtomicInteger> ran = new ConcurrentHashMap<>();

    FaultProgram(DeterministicSimulation sim) {
        this.sim = sim;
        this.origin = sim.await(sim.fenceline().newWorker("explorer"));
    }

    /** @return the origin worker's figures over every program run so far */
    dev.fenceline.WorkerStatistics statistics() {
        return origin.statistics();
    }

    /** @return calls that failed with an unknown outcome, over every program run so far */
    long unknown() {
        return unknown;
    }

    private static ByteBuffer word(long v) {
        return ByteBuffer.allocate(8).order(ByteOrder.nativeOrder()).putLong(0, v);
    }

    /**
     * @param program the steps
     * @return null if every check held, else what did not (with the program, to reproduce it)
     */
    String run(List<Step> program) {
        int run = runs.incrementAndGet();
        Worker target = sim.await(sim.fenceline().newWorker("target-" + run));
        MemoryRegion region = target.allocate(4096);
        target.setActiveMessageHandler(MESSAGE_ID, (h, p) -> ran.computeIfAbsent(h.order(ByteOrder.nativeOrder()).getLong(0), k -> new AtomicInteger())
                .incrementAndGet());
        Endpoint raw = sim.await(origin.connect(target.address()));
        History history = new History();
        Endpoint ep = history.record(raw);
        RemoteKey key = origin.unpackRemoteKey(region.remoteKey().toBytes());
        long base = region.address();
        List<CompletableFuture<?>> calls = new ArrayList<>();
        List<Long> messages = new ArrayList<>();
        List<CompletableFuture<?>> messageCalls = new ArrayList<>();
        boolean killed = false;
        for (int i = 0; i < program.size(); i++) {
            Step s = program.get(i);
            int w = s.arg() & 3;
            switch (s.kind()) {
                case PUT -> calls.add(ep.put(word(i + 1), base + 64L * w, key).toCompletableFuture());
                case GET -> calls.add(ep.get(ByteBuffer.allocate(8), base + 64L * w, key).toCompletableFuture());
                case ADD -> calls.add(ep.atomicPost64(AtomicOp.ADD, base + COUNTERS + 8L * w, key, 1)
                        .toCompletableFuture());
                case FETCH_ADD -> calls.add(ep.atomicFetch64(AtomicOp.ADD, base + COUNTERS + 8L * w, key, 1)
                        .toCompletableFuture());
                case MESSAGE -> {
                    long tag = ((long) run << 20) | i;
                    CompletableFuture<?> m = ep.sendActiveMessage(MESSAGE_ID, word(tag), ByteBuffer.allocate(0))
                            .toCompletableFuture();
                    messages.add(tag);
                    messageCalls.add(m);
                    calls.add(m);
                }
                case FLUSH -> calls.add(ep.flush().toCompletableFuture());
                case FENCE -> ep.fence();
                case WAIT -> sim.advance(Duration.ofNanos(s.arg() * 1000L));
                default -> killed |= fault(raw, target, s);
            }
        }
        for (CompletableFuture<?> c : calls) {
            settle(c);
            if (c.isCompletedExceptionally()) {
                try {
                    c.join();
                } catch (CompletionException e) {
                    unknown += e.getCause() instanceof dev.fenceline.OutcomeUnknownException ? 1 : 0;
                }
            }
        }
        settle(raw.flush().toCompletableFuture());
        sim.advance(Duration.ofSeconds(30)); // stalled targets resume and take what waited
        ByteBuffer memory = region.buffer().order(ByteOrder.nativeOrder());
        StringBuilder bad = new StringBuilder();
        try {
            HistoryChecker.of(history).assertEveryRequestCompleted().assertFencesHeld().assertFlushesCovered()
                    .assertOutcomesTruthful().assertExactlyOnce(a -> memory.getLong((int) (a - base)));
        } catch (AssertionError e) {
            bad.append(e.getMessage()).append("; ");
        }
        for (int m = 0; m < messages.size(); m++) {
            AtomicInteger n = ran.get(messages.get(m));
            int times = n == null ? 0 : n.get();
            boolean ok = messageCalls.get(m).isDone() && !messageCalls.get(m).isCompletedExceptionally();
            if (times > 1 || (ok && times != 1)) {
                bad.append("message ").append(m).append(" ran ").append(times).append(" times, outcome ")
                        .append(ok ? "success" : "failure").append("; ");
            }
        }
        settle(raw.close().toCompletableFuture()); // its keepalive must not tick through later runs
        if (!killed) {
            sim.await(target.close());
        }
        return bad.length() == 0 ? null : "program " + program + ": " + bad;
    }

    private boolean fault(Endpoint raw, Worker target, Step s) {
        SimNetwork net = sim.network();
        List<LaneInfo> lanes = raw.lanes();
        int lane = s.arg();
        boolean exists = lane < lanes.size();
        try {
            switch (s.kind()) {
                case FAIL -> {
                    if (exists && lanes.get(lane).live()) {
                        net.failLane(raw, lane);
                    }
                }
                case STALL -> {
                    if (exists && lanes.get(lane).live()) {
                        net.stallLane(raw, lane, Duration.ofSeconds(8));
                    }
                }
                case REPLACE -> {
                    if (exists && lanes.get(lane).live()) {
                        net.replaceLane(raw, lane);
                    }
                }
                case RECOVER -> {
                    if (exists && !lanes.get(lane).live()) {
                        net.recoverLane(raw, lane);
                    }
                }
                case ADD_LANE -> net.addLane(raw, EnumSet.of(LaneType.AM, LaneType.RMA, LaneType.AMO));
                case KILL -> {
                    target.close(); // not awaited: the close races what is in flight, as a crash would
                    return true;
                }
                default -> throw new IllegalArgumentException(s.toString());
            }
        } catch (IllegalStateException | IllegalArgumentException raced) {
            // the lane changed under a fault injected before: nothing to do
        }
        return false;
    }

    private void settle(CompletableFuture<?> f) {
        try {
            sim.await(f);
        } catch (CompletionException failed) {
            // checked through the history
        }
    }
}
