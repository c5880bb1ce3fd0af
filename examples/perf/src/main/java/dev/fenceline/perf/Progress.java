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
 * interpreter (an uncommon trap) in the middle of the measurement. {@link #measured} warms a run's
 * code up and measures it, the two with the same code.
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

    /**
     * Runs {@code body}, which sets this count, while a thread shows it every {@value #PERIOD_MS} ms,
     * and once more at the end (after that thread has ended).
     *
     * @param <T> what the run returns
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
            joinUninterruptibly(shower);
            show.accept(get());
        }
    }

    /** Waits up to 5 s for {@code t} to end even if this thread is interrupted, whose interrupt it keeps. */
    private static void joinUninterruptibly(Thread t) {
        boolean interrupted = false;
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(5);
        long left;
        while (t.isAlive() && (left = deadline - System.nanoTime()) > 0) {
            try {
                TimeUnit.NANOSECONDS.timedJoin(t, left);
            } catch (InterruptedException e) {
                interrupted = true;
            }
        }
        if (interrupted) {
            Thread.currentThread().interrupt();
        }
    }

    /**
     * One pass of a measured run.
     *
     * @param <T> what it returns
     */
    @FunctionalInterface
    interface Pass<T> {
        /**
         * @param n operations
         * @param progress where the pass counts them
         * @return the pass's result
         * @throws Exception if it fails
         */
        T run(int n, Progress progress) throws Exception;
    }

    /** The wait for the compilers between passes of a warm-up ({@link JitSettle}). */
    @FunctionalInterface
    interface Settle {
        /** @throws Exception if the wait fails */
        void await() throws Exception;
    }

    /**
     * Warms {@code pass} up ({@link #warmUp}), then measures it over {@code n} operations, shown.
     *
     * @param <T> what a pass returns
     * @param warmup operations of warm-up in all (0: none)
     * @param n operations measured
     * @param pass the code, the same in warm-up and measurement
     * @param settle the wait for the compilers
     * @param show where the measured run's count goes (null: nowhere)
     * @return the measured pass's result
     * @throws Exception what a pass or a wait threw
     */
    static <T> T measured(int warmup, int n, Pass<T> pass, Settle settle, LongConsumer show) throws Exception {
        warmUp(warmup, pass, settle);
        Progress p = new Progress();
        return p.shown(show, () -> pass.run(n, p));
    }

    /**
     * A warm-up of {@code warmup} operations in four passes of the measured code (3/8, 3/8, 1/8 and
     * 1/8 of the count, each with a count nobody shows), the compilers waited for after the second
     * and after the last; a warm-up under 8 operations is one or two passes and one wait.
     *
     * <p>A loop that runs long is compiled while it runs (on-stack replacement), betting that its
     * exit is not taken; the first pass to leave that code throws it away, and the JIT then bets no
     * more on that exit. After one long pass the measured run was that next pass: it ran the first
     * tier's code until its loop was compiled again (JIT log of a 10,000,000-put shm stream after a
     * warm-up of 1,000,000: queued some 48,000 puts in, ready 38 ms later). Here the loop the first two
     * passes got compiled is left by the third pass at the latest, if its code was ready by then,
     * and the fourth has it compiled again, knowing its exit, so that the measured run enters code
     * no pass throws away. That needs the first two passes to get the loop compiled (some 100,000
     * turns or more) and the last two some 50,000 turns each (once its code is thrown away, the loop
     * is compiled again only that many turns later): a warm-up of about 400,000 operations. It also needs every branch of the measured run taken in the warm-up (a
     * {@code --window} longer than a pass never flushes there). A shorter warm-up leaves the
     * measured run to compile its loop, as one pass did; the waits are bounded by
     * {@code --jit-settle-ms}, and a compilation that is still running looks like a quiet compiler.
     *
     * @param warmup operations in all (0: none)
     * @param pass the measured code
     * @param settle the wait for the compilers
     * @throws Exception what a pass or a wait threw
     */
    static void warmUp(int warmup, Pass<?> pass, Settle settle) throws Exception {
        if (warmup <= 0) {
            return;
        }
        int late = warmup / 8;
        int early = warmup - 2 * late;
        run(pass, early - early / 2);
        run(pass, early / 2);
        settle.await();
        if (late > 0) {
            run(pass, late);
            run(pass, late);
            settle.await();
        }
    }

    private static void run(Pass<?> pass, int n) throws Exception {
        if (n > 0) {
            pass.run(n, new Progress());
        }
    }
}
