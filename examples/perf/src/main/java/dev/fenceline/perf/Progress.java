package dev.fenceline.perf;

import java.util.concurrent.Callable;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.LongConsumer;

/**
 * How far a run has come: the measuring code stores its count (an ordered store, no call), and
 * {@link #shown} hands it to the progress bar from a thread of its own. A callback in the loop
 * instead was a call site the warm-up trained on its own no-op callback: the JIT compiled the loop
 * for that class alone, and the measured run's callback, another class, sent it back to the
 * interpreter (an uncommon trap) in the middle of the measurement.
 */
final class Progress {
    /** How often {@link #shown} reads the count. */
    static final long PERIOD_MS = 100;

    private final AtomicLong done = new AtomicLong();

    /** @param n how many are done (from the measuring thread, or any one thread at a time) */
    void set(long n) {
        done.lazySet(n);
    }

    /** @return how many are done, as last set */
    long get() {
        return done.get();
    }

    /** @return a count for a pass of warm-up, which nobody shows */
    static Progress unseen() {
        return new Progress();
    }

    /**
     * Runs {@code body}, which sets this count, while a thread shows it every {@value #PERIOD_MS} ms,
     * and once more at the end.
     *
     * @param show where the count goes (null: nowhere, and no thread)
     * @param body the measured run
     * @return what it returned
     * @throws Exception what it threw
     */
    <T> T shown(LongConsumer show, Callable<T> body) throws Exception {
        if (show == null) {
            return body.call();
        }
        Thread shower = new Thread(() -> {
            try {
                while (!Thread.currentThread().isInterrupted()) {
                    show.accept(get());
                    TimeUnit.MILLISECONDS.sleep(PERIOD_MS);
                }
            } catch (InterruptedException e) {
                // the run ended
            }
        }, "perf-progress");
        shower.setDaemon(true);
        shower.start();
        try {
            return body.call();
        } finally {
            shower.interrupt();
            shower.join(TimeUnit.SECONDS.toMillis(5));
            show.accept(get());
        }
    }

    /** One pass of a measured loop over {@code n} operations. */
    @FunctionalInterface
    interface Pass {
        void run(int n, Progress progress) throws Exception;
    }

    /**
     * A warm-up of {@code warmup} operations as two passes of the measured code, each with a count
     * nobody shows. One long pass leaves the JIT's compiled loop behind when it ends: the loop was
     * compiled while it ran (on-stack replacement), with its exit never taken, and leaving it throws
     * that code away. The measured run then ran the first tier's code until the loop was compiled
     * again (JIT log of a 10,000,000-put shm stream: queued some 48,000 puts in, ready 38 ms later).
     * The second pass has the loop compiled knowing its exit, and the measured run enters that code.
     *
     * @param warmup operations in all (0: none)
     * @param pass the measured code
     * @throws Exception what a pass threw
     */
    static void warmUp(int warmup, Pass pass) throws Exception {
        if (warmup <= 0) {
            return;
        }
        pass.run(warmup - warmup / 2, unseen());
        if (warmup / 2 > 0) {
            pass.run(warmup / 2, unseen());
        }
    }
}
