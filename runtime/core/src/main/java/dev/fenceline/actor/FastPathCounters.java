package dev.fenceline.actor;

import dev.fenceline.internal.ThreadCounter;
import dev.fenceline.internal.VarHandles;
import dev.fenceline.spi.RequestTrace;
import dev.fenceline.spi.support.Tracing;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;

/**
 * What the fast path counts itself (its operations never reach the actor's counters), and the
 * trace events of its operations, reported on the calling thread. Each count also goes to the
 * worker's running totals.
 */
final class FastPathCounters {
    /** Exact under concurrent callers, without a locked instruction per operation. */
    private final ThreadCounter operations;
    private final WorkerCounts worker;
    private static final VarHandle FAILURES = VarHandles.field(MethodHandles.lookup(), "failures", long.class);
    private static final VarHandle FLUSHES = VarHandles.field(MethodHandles.lookup(), "flushes", long.class);

    /** Refused (a bad key, a closed region): counted as issued and failed. Rare: a field, not an adder. */
    private volatile long failures;
    /**
     * Flushes the facade completed itself, under a grant: one atomic add each, beside the flush's own
     * atomics; a field rather than a {@code LongAdder} (two of those were 64 bytes per endpoint).
     */
    private volatile long flushes;

    /** @param worker the worker's running totals */
    FastPathCounters(WorkerCounts worker) {
        this.worker = worker;
        this.operations = new ThreadCounter(worker.fast());
    }

    /** An operation was done and is visible, on this thread. */
    void operation() {
        operations.increment();
        if (Tracing.used()) {
            traced();
        }
    }

    private static void traced() {
        RequestTrace t = Tracing.take();
        if (t != null) { // done and visible on this thread, before the call returns
            t.admitted(RequestTrace.DIRECT, -1, true, true);
            t.visible(-1);
        }
    }

    /** A direct active message was queued (counted by the lane, through the direct ledger). */
    void message() {
        RequestTrace t = Tracing.take();
        if (t != null) {
            t.admitted(RequestTrace.DIRECT, -1, false, false);
        }
    }

    void failure() {
        FAILURES.getAndAdd(this, 1L);
        worker.row().add(Totals.FAST_FAILED, 1);
    }

    void flush() {
        FLUSHES.getAndAdd(this, 1L);
        worker.row().add(Totals.FAST_FLUSHES, 1);
    }

    /** @return operations the fast path performed */
    long operations() {
        return operations.sum();
    }

    /** @return fast-path operations that were refused */
    long failures() {
        return failures;
    }

    /** @return flushes completed under a grant, without the actor */
    long flushes() {
        return flushes;
    }
}
