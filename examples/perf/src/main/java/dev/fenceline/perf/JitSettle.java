package dev.fenceline.perf;

import java.lang.management.CompilationMXBean;
import java.lang.management.ManagementFactory;
import java.util.concurrent.TimeUnit;

/**
 * Waits after a warm-up until this JVM's JIT compilers have gone quiet. On a machine with two cores
 * a stream measured over a fraction of a second otherwise shares them with the compilers of both
 * processes (sampled: C2 at up to 69 % of a core five seconds into a run), and its rate says more
 * about whether they were done than about the runtime. ucx_perftest has no compiler to wait for.
 */
final class JitSettle {
    /** How long the compilers must have done nothing. */
    static final long QUIET_MS = 200;
    private static final long POLL_MS = 20;

    private JitSettle() {
    }

    /**
     * @param maxMillis the longest wait (0: none)
     * @return how long it waited, in milliseconds
     * @throws InterruptedException if interrupted while waiting
     */
    static long await(long maxMillis) throws InterruptedException {
        CompilationMXBean jit = ManagementFactory.getCompilationMXBean();
        if (maxMillis <= 0 || jit == null || !jit.isCompilationTimeMonitoringSupported()) {
            return 0;
        }
        long start = System.nanoTime();
        long deadline = start + TimeUnit.MILLISECONDS.toNanos(maxMillis);
        long seen = jit.getTotalCompilationTime();
        long quietSince = start;
        while (deadline - System.nanoTime() > 0
                && System.nanoTime() - quietSince < TimeUnit.MILLISECONDS.toNanos(QUIET_MS)) {
            Thread.sleep(POLL_MS);
            long now = jit.getTotalCompilationTime();
            if (now != seen) {
                seen = now;
                quietSince = System.nanoTime();
            }
        }
        return TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start);
    }
}
