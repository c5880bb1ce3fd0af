package dev.fenceline.actor;

import java.util.concurrent.atomic.AtomicLongArray;

/**
 * An endpoint's counters: written only by its actor (single writer, so {@code lazySet} of the
 * incremented value is enough), read by any thread for statistics.
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

    private final AtomicLongArray values = new AtomicLongArray(Counter.values().length);

    void increment(Counter c) {
        values.lazySet(c.ordinal(), values.get(c.ordinal()) + 1);
    }

    void max(Counter c, long v) {
        if (v > values.get(c.ordinal())) {
            values.lazySet(c.ordinal(), v);
        }
    }

    /**
     * @param c a counter
     * @return its value
     */
    public long get(Counter c) {
        return values.get(c.ordinal());
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
