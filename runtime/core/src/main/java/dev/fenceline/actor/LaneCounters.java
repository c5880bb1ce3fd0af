package dev.fenceline.actor;

import java.util.concurrent.atomic.AtomicLongArray;

/**
 * Per-lane counters of one endpoint: written only by its actor (single writer, so {@code lazySet}
 * of the incremented value is enough), read by any thread. Sized to the lane table, grown when a
 * lane is added.
 */
final class LaneCounters {
    /** What is counted per lane. */
    enum Counter {
        /** Requests sent on the lane. */
        OPERATIONS,
        /** Transport operations posted. */
        FRAGMENTS,
        /** Payload bytes posted. */
        BYTES,
        /** Fragments restarted elsewhere after the slot's connection changed. */
        RESTARTS,
        /** Failures of the slot's connection that the endpoint went on without. */
        FAILOVERS,
        /** Times an operation or flush waited for room on the lane. */
        PARKS
    }

    private static final int FIELDS = Counter.values().length;
    private volatile AtomicLongArray values = new AtomicLongArray(0);

    /**
     * @param lane a slot
     * @param c what
     * @param n how much more
     */
    void add(int lane, Counter c, long n) {
        AtomicLongArray v = values;
        int i = lane * FIELDS + c.ordinal();
        if (i >= v.length()) {
            AtomicLongArray grown = new AtomicLongArray((lane + 1) * FIELDS);
            for (int k = 0; k < v.length(); k++) {
                grown.lazySet(k, v.get(k));
            }
            values = grown;
            v = grown;
        }
        v.lazySet(i, v.get(i) + n);
    }

    /**
     * @param lane a slot
     * @param c what
     * @return its count
     */
    long get(int lane, Counter c) {
        AtomicLongArray v = values;
        int i = lane * FIELDS + c.ordinal();
        return i < v.length() ? v.get(i) : 0;
    }
}
