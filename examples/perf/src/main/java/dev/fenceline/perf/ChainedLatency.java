package dev.fenceline.perf;

import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.LongFunction;

/**
 * A one-at-a-time latency test whose operations are issued each from the previous one's completion,
 * on the thread that completes it (for tcp, the event loop that read the answer), as ucx_perftest's
 * one thread per process posts, progresses its worker and posts again: no thread waits for an answer
 * and hands the next operation over. Each step happens after the one before (its completion), so the
 * chain alone writes the histogram. An operation that completes before its callback is attached is
 * taken by the thread that issued it, in a loop: the chain never nests deeper than the one callback
 * that runs it.
 */
final class ChainedLatency {
    private final LongFunction<CompletionStage<?>> issue;
    private final long n;
    private final Latencies h;
    private final CountDownLatch finished = new CountDownLatch(1);
    private volatile long done;
    private volatile Throwable failure;
    private volatile boolean stopped;
    private long t0;

    /**
     * @param issue issues the i-th operation (from 1)
     * @param n how many
     * @param h where each operation's time from issue to completion goes
     */
    ChainedLatency(LongFunction<CompletionStage<?>> issue, long n, Latencies h) {
        this.issue = issue;
        this.n = n;
        this.h = h;
    }

    /**
     * Runs the chain and waits for its end.
     *
     * @param id the test's name, for errors
     * @param timeoutNanos how long the whole chain may take
     * @param progress how many are done, set now and then
     * @throws IllegalStateException if the chain did not finish in time (it then stops) or an operation
     *     failed
     * @throws InterruptedException if interrupted while waiting
     */
    void run(String id, long timeoutNanos, Progress progress) throws InterruptedException {
        long deadline = System.nanoTime() + timeoutNanos;
        next();
        try {
            while (!finished.await(50, TimeUnit.MILLISECONDS)) {
                progress.set(done);
                if (System.nanoTime() - deadline > 0) {
                    throw new IllegalStateException(id + " chain did not finish within "
                            + TimeUnit.NANOSECONDS.toSeconds(timeoutNanos) + " s: " + done + " of " + n);
                }
            }
        } finally {
            stopped = true; // a chain given up on issues nothing more
        }
        if (failure != null) {
            throw new IllegalStateException(id + " failed after " + done, failure);
        }
        progress.set(n);
    }

    /** @return the operations' times */
    Latencies histogram() {
        return h;
    }

    /** Issues operations until one is still outstanding (its completion goes on), or the end. */
    private void next() {
        try {
            while (!stopped) {
                if (done >= n) {
                    finished.countDown();
                    return;
                }
                t0 = System.nanoTime();
                CompletableFuture<?> f = issue.apply(done + 1).toCompletableFuture();
                if (!f.isDone()) {
                    // The callback runs here if f completed meanwhile: then this loop goes on instead.
                    AtomicBoolean attaching = new AtomicBoolean(true);
                    f.whenComplete((v, e) -> {
                        try {
                            if (!completed(e)) {
                                return;
                            }
                        } catch (Throwable t) { // what a callback throws would vanish into its stage
                            fail(t);
                            return;
                        }
                        if (!attaching.compareAndSet(true, false)) {
                            next(); // completed later, on the thread that completed it
                        }
                    });
                    if (attaching.compareAndSet(true, false)) {
                        return; // its completion issues the next
                    }
                    continue; // completed while attaching: this thread issues the next
                }
                if (!completed(f.isCompletedExceptionally() ? f.handle((v, e) -> e).join() : null)) {
                    return;
                }
            }
        } catch (Throwable e) { // a callback's exception would vanish into its dependent stage
            fail(e);
        }
    }

    /** @return whether the chain goes on */
    private boolean completed(Throwable e) {
        if (e != null) {
            fail(e);
            return false;
        }
        h.recordValue(System.nanoTime() - t0);
        done = done + 1; // one writer at a time: the chain
        return true;
    }

    private void fail(Throwable e) {
        if (failure == null) {
            failure = e;
        }
        stopped = true;
        finished.countDown();
    }
}
