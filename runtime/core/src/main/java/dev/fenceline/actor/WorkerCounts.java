package dev.fenceline.actor;

import dev.fenceline.internal.ThreadCounter;
import dev.fenceline.internal.ThreadCounters;

/**
 * A worker's running totals, in {@link Totals}' layout: every count of its endpoints also goes here as
 * it is made, so that the worker's statistics cost a row per counting thread rather than a visit to
 * each endpoint (ten thousand idle endpoints, visited once a second for the counters file, were half
 * of an idle worker's CPU). The fast path's operations have a counter of their own, which each
 * endpoint's counter counts into through its thread's cell: one more plain store per operation.
 *
 * @param rows every count but the fast path's operations, one row per counting thread
 * @param fast the fast path's operations
 */
record WorkerCounts(ThreadCounters rows, ThreadCounter fast) {
    /** @return totals of nothing yet */
    static WorkerCounts create() {
        int max = EndpointCounters.Counter.MAX_FENCE_QUEUE_DEPTH.ordinal();
        return new WorkerCounts(new ThreadCounters(Totals.SIZE, max), new ThreadCounter());
    }

    /** @return the calling thread's row */
    ThreadCounters.Row row() {
        return rows.row();
    }

    /**
     * The calling thread's row, through a field where a counting object keeps the row it used last,
     * so that a count on a per-operation path needs no thread-local lookup while the same thread
     * keeps counting. The field is read and written opaque: a stale or another thread's row only
     * costs the lookup, since a row is checked to be the caller's own.
     *
     * @param last the handle of the holder's field of type {@link ThreadCounters.Row}
     * @param holder the object that holds it
     * @return the calling thread's row
     */
    ThreadCounters.Row row(java.lang.invoke.VarHandle last, Object holder) {
        ThreadCounters.Row r = (ThreadCounters.Row) last.getOpaque(holder);
        if (r == null || !r.mine()) {
            r = rows.row();
            last.setOpaque(holder, r);
        }
        return r;
    }
}
