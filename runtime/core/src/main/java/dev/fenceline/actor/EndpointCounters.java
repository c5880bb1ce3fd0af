package dev.fenceline.actor;

import dev.fenceline.internal.ThreadCounters;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;

/**
 * An endpoint's counters: written only by its actor (single writer, so {@code lazySet} of the
 * incremented value is enough), read by any thread for statistics. Each count also goes to its
 * worker's running totals, in the row of the thread the actor runs on.
 */
public final class EndpointCounters {
    /** The counters. */
    public enum Counter {
        /** Operations accepted. */
        OPERATIONS,
        /** Operations completed successfully. */
        COMPLETED,
        /** Operations completed with an error. */
        FAILED,
        /** User flushes completed. */
        FLUSHES,
        /** Strong fences started. */
        STRONG_FENCES,
        /** Weak fences applied. */
        WEAK_FENCES,
        /** Fence epochs fast-forwarded. */
        FAST_FORWARDS,
        /** Requests that waited in the fence queue. */
        FENCE_QUEUED,
        /** Deepest fence queue. */
        MAX_FENCE_QUEUE_DEPTH,
        /** Lane table changes applied (failures, replacements, recoveries, additions). */
        RECONFIGURATIONS,
        /** Requests restarted on the current lanes after a reconfiguration. */
        RESTARTS
    }

    private static final VarHandle VALUES = MethodHandles.arrayElementVarHandle(long[].class);
    private static final int COUNT = Counter.values().length;

    /**
     * Through {@link #VALUES}: a plain array rather than an {@code AtomicLongArray}, one object less
     * for every endpoint to hold and for the statistics' walk over every endpoint to visit.
     */
    private final long[] values = new long[COUNT];
    private final WorkerCounts worker;
    private static final VarHandle ROW = dev.fenceline.internal.VarHandles.field(MethodHandles.lookup(), "row",
            ThreadCounters.Row.class);
    /** The worker's row of the thread the actor ran on last ({@link WorkerCounts#row(VarHandle, Object)}). */
    @SuppressWarnings("unused") // through ROW
    private ThreadCounters.Row row;

    /** @param worker the worker's running totals */
    EndpointCounters(WorkerCounts worker) {
        this.worker = worker;
    }

    private ThreadCounters.Row row() {
        return worker.row(ROW, this);
    }

    void increment(Counter c) {
        int i = c.ordinal();
        VALUES.setRelease(values, i, (long) VALUES.get(values, i) + 1);
        row().add(i, 1);
    }

    void max(Counter c, long v) {
        int i = c.ordinal();
        if (v > (long) VALUES.get(values, i)) {
            VALUES.setRelease(values, i, v);
            row().max(i, v);
        }
    }

    /**
     * @param c a counter
     * @return its value
     */
    public long get(Counter c) {
        return (long) VALUES.getAcquire(values, c.ordinal());
    }

    @Override
    public String toString() {
        StringBuilder sb = new StringBuilder();
        for (Counter c : Counter.values()) {
            sb.append(sb.length() == 0 ? "" : ", ").append(c.name().toLowerCase(java.util.Locale.ROOT).replace('_', ' '))
                    .append(' ').append(get(c));
        }
        return sb.toString();
    }
}
