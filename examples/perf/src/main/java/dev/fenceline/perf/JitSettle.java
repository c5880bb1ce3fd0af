package dev.fenceline.perf;

import java.lang.management.CompilationMXBean;
import java.lang.management.ManagementFactory;
import java.util.concurrent.TimeUnit;

/**
 * Waits within a warm-up (after its second and its last pass: {@link Progress#warmUp}) until the JIT
 * compilers have gone quiet: this JVM's and, in a two-process run, the target's. On a machine with two cores a stream measured over a fraction of a second
 * otherwise shares them with the compilers of both processes (sampled: C2 at up to 69 % of a core
 * five seconds into a run), and its rate says more about whether they were done than about the
 * runtime. ucx_perftest has no compiler to wait for. A JVM's compile time grows as compilations end,
 * so a long one still running looks quiet until it ends; the quiet period is the margin for that.
 */
final class JitSettle {
    /** How long the compilers must have done nothing. */
    static final long QUIET_MS = 200;
    static final long POLL_MS = 20;

    /** Milliseconds spent compiling so far, or -1 where a JVM does not tell. */
    @FunctionalInterface
    interface CompileTime {
        long millis() throws java.io.IOException;
    }

    /** Where the wait's time comes from: the real clock and sleeps, or a test's. */
    interface Clock {
        long nanoTime();

        void sleepMillis(long millis) throws InterruptedException;
    }

    static final Clock REAL = new Clock() {
        @Override
        public long nanoTime() {
            return System.nanoTime();
        }

        @Override
        public void sleepMillis(long millis) throws InterruptedException {
            Thread.sleep(millis);
        }
    };

    private JitSettle() {
    }

    /** @return this JVM's compile time */
    static CompileTime thisJvm() {
        CompilationMXBean jit = ManagementFactory.getCompilationMXBean();
        if (jit == null || !jit.isCompilationTimeMonitoringSupported()) {
            return () -> -1;
        }
        return jit::getTotalCompilationTime;
    }

    /**
     * @param maxMillis the longest wait (0: none)
     * @param compilers the compile time of each JVM to wait for; one that does not tell is not waited for
     * @param clock the clock
     * @return how long it waited, in milliseconds
     * @throws InterruptedException if interrupted while waiting
     * @throws java.io.IOException if a peer's compile time cannot be read
     */
    static long await(long maxMillis, java.util.List<CompileTime> compilers, Clock clock)
            throws InterruptedException, java.io.IOException {
        if (maxMillis <= 0) {
            return 0;
        }
        long start = clock.nanoTime();
        long seen = total(compilers);
        if (seen < 0) {
            return 0;
        }
        long deadline = start + TimeUnit.MILLISECONDS.toNanos(maxMillis);
        long quietSince = start;
        while (deadline - clock.nanoTime() > 0
                && clock.nanoTime() - quietSince < TimeUnit.MILLISECONDS.toNanos(QUIET_MS)) {
            clock.sleepMillis(POLL_MS);
            long now = total(compilers);
            if (now != seen) {
                seen = now;
                quietSince = clock.nanoTime();
            }
        }
        return TimeUnit.NANOSECONDS.toMillis(clock.nanoTime() - start);
    }

    /** @return the sum of the compile times that are told, or -1 if none is */
    private static long total(java.util.List<CompileTime> compilers) throws java.io.IOException {
        long sum = -1;
        for (CompileTime c : compilers) {
            long t = c.millis();
            if (t >= 0) {
                sum = Math.max(sum, 0) + t;
            }
        }
        return sum;
    }
}
