package dev.fenceline.actor;

import dev.fenceline.EndpointStatistics;
import dev.fenceline.LaneInfo;
import dev.fenceline.LaneStatistics;
import dev.fenceline.actor.EndpointCounters.Counter;
import java.util.ArrayList;
import java.util.List;

/**
 * Totals of one or more endpoints: the actor's counters, then what the fast path and the direct
 * active messages count themselves, and the figures users see, derived from them in one place.
 * Direct active messages are operations when queued, outstanding until answered, then done or
 * failed: each answer is counted once, as a success or as a failure, so that neither figure ever
 * goes down between two reads (a difference of counts read one after another could).
 */
final class Totals {
    /** Read once: {@code values()} copies its array at every call. */
    private static final Counter[] COUNTERS = Counter.values();
    // The raw counts, in this order: the actor's counters by ordinal, then these. A worker's running
    // totals (WorkerCounts) are kept in the same order.
    static final int FAST = COUNTERS.length;
    static final int FAST_FLUSHES = FAST + 1;
    static final int FAST_FAILED = FAST + 2;
    static final int DIRECT_SUCCEEDED = FAST + 3;
    /** Direct operations sent, less those the actor took back (it counts them from then on). */
    static final int DIRECT_SENT = FAST + 4;
    static final int DIRECT_FAILED = FAST + 5;
    static final int SIZE = FAST + 6;

    private final long[] t;

    Totals() {
        this.t = new long[SIZE];
    }

    private Totals(long[] t) {
        this.t = t;
    }

    /**
     * @param counts a worker's running totals
     * @return their figures
     */
    static Totals of(WorkerCounts counts) {
        long[] t = counts.rows().sum();
        t[FAST] += counts.fast().sum();
        return new Totals(t);
    }

    /** @param c an endpoint whose counts join these */
    void add(EndpointChannel c) {
        EndpointCounters counters = c.counters();
        for (Counter k : COUNTERS) {
            long v = counters.get(k);
            t[k.ordinal()] = k == Counter.MAX_FENCE_QUEUE_DEPTH ? Math.max(t[k.ordinal()], v) : t[k.ordinal()] + v;
        }
        t[FAST] += c.fastOperations();
        t[FAST_FLUSHES] += c.fastFlushes();
        t[FAST_FAILED] += c.fastFailures();
        // Posted operations the actor took back are its own from then on: counted once, by it.
        t[DIRECT_SUCCEEDED] += c.direct().succeeded();
        t[DIRECT_SENT] += c.direct().sent() - c.direct().taken();
        t[DIRECT_FAILED] += c.direct().failures();
    }

    /** @return one of the actor's counters */
    long get(Counter c) {
        return t[c.ordinal()];
    }

    long operations() {
        return t[Counter.OPERATIONS.ordinal()] + t[FAST] + t[FAST_FAILED] + t[DIRECT_SENT];
    }

    long completed() {
        return t[Counter.COMPLETED.ordinal()] + t[FAST] + t[DIRECT_SUCCEEDED];
    }

    long failed() {
        return t[Counter.FAILED.ordinal()] + t[FAST_FAILED] + t[DIRECT_FAILED];
    }

    long outstanding() {
        return Math.max(0, operations() - completed() - failed());
    }

    long flushes() {
        return t[Counter.FLUSHES.ordinal()] + t[FAST_FLUSHES];
    }

    /** @return operations the calling thread performed or queued itself, under the grant */
    long fastPath() {
        return t[FAST] + t[DIRECT_SENT];
    }

    /**
     * @param channel an endpoint
     * @return the statistics its user sees: its totals, and each lane's counters
     */
    static EndpointStatistics statisticsOf(EndpointChannel channel) {
        Totals t = new Totals();
        t.add(channel);
        List<LaneInfo> table = channel.lanes();
        LaneCounters c = channel.laneCounters();
        List<LaneStatistics> lanes = new ArrayList<>(table.size());
        for (LaneInfo l : table) {
            int i = l.index();
            lanes.add(new LaneStatistics(i, l.transport(), l.live(), c.get(i, LaneCounters.Counter.OPERATIONS),
                    c.get(i, LaneCounters.Counter.FRAGMENTS), c.get(i, LaneCounters.Counter.BYTES),
                    c.get(i, LaneCounters.Counter.RESTARTS), c.get(i, LaneCounters.Counter.FAILOVERS),
                    c.get(i, LaneCounters.Counter.PARKS)));
        }
        return new EndpointStatistics(channel.name(), t.operations(), t.completed(), t.failed(), t.outstanding(),
                t.fastPath(), t.flushes(), t.get(Counter.STRONG_FENCES), t.get(Counter.WEAK_FENCES),
                t.get(Counter.RECONFIGURATIONS), t.get(Counter.RESTARTS), channel.flushLatency().snapshot(),
                channel.fenceLatency().snapshot(), List.copyOf(lanes));
    }
}
