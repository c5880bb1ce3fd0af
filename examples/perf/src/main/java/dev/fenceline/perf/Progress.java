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
            stop(shower, show);
        }
    }

    /** Ends the shower and shows the last count; never throws over what the run threw or returned. */
    private void stop(Thread shower, LongConsumer show) {
        shower.interrupt();
        boolean interrupted = false;
        try {
            shower.join(TimeUnit.SECONDS.toMillis(5));
        } catch (InterruptedException e) {
            interrupted = true; // kept for the caller, after the last count is shown
        }
        show.accept(get());
        if (interrupted) {
            Thread.currentThread().interrupt();
        }
    }

    /** One pass of a measured loop over {@code n} operations. */
    @FunctionalInterface
    interface Pass {
        void run(int n, Progress progress) throws Exception;
    }

    /** The wait for the compilers between passes ({@link JitSettle}). */
    @FunctionalInterface
    interface Settle {
        void await() throws Exception;
    }

    /**
     * A warm-up of {@code warmup} operations in four passes of the measured code (3/8, 3/8, 1/8 and
     * 1/8 of the count, each with a count nobody shows), the compilers waited for after the second
     * and after the last.
     *
     * <p>A loop that runs long is compiled while it runs (on-stack replacement), betting that it does
     * not end; the first pass to leave that code throws it away, and the JIT bets no more on that
     * exit. After one long pass the measured run was that next pass: it ran the first tier's code
     * until its loop was compiled again (JIT log of a 10,000,000-put shm stream: queued some 48,000
     * puts in, ready 38 ms later). Here the compiled loop the first two passes leave is thrown away
     * by the third at the latest (its code is ready by then: the compilers were waited for), and the
     * fourth has it compiled again, knowing its exit, before the last wait; the measured run enters
     * that code. This needs the first two passes to get the loop compiled and the last two to turn
     * it a few thousand times each (the first tier asks for the compiler every 8,192 turns); a
     * shorter warm-up leaves the measured run to compile its loop as one pass did.
     *
     * @param warmup operations in all (0: none)
     * @param pass the measured code
     * @param settle the wait for the compilers
     * @throws Exception what a pass or the wait threw
     */
    static void warmUp(int warmup, Pass pass, Settle settle) throws Exception {
        if (warmup <= 0) {
            return;
        }
        int late = warmup / 8;
        int early = warmup - 2 * late;
        run(pass, early - early / 2);
        run(pass, early / 2);
        settle.await();
        run(pass, late);
        run(pass, late);
        settle.await();
    }

    private static void run(Pass pass, int n) throws Exception {
        if (n > 0) {
            pass.run(n, unseen());
        }
    }
}
