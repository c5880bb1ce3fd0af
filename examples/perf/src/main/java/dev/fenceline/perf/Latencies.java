package dev.fenceline.perf;

import java.util.Arrays;
import java.util.concurrent.TimeUnit;
import org.HdrHistogram.Histogram;

/**
 * A latency row's record: every measured iteration in an HdrHistogram (its percentiles), and the
 * last {@value #LAST} iterations as they came. ucx_perftest reports as its percentile the median of
 * its last 2,048 iterations (a ring it writes each iteration), not of the whole run; the median of
 * this row's last {@value #LAST} is that statistic on this side. At a few hundred nanoseconds an
 * iteration the ring holds about the run's last millisecond, so it moves with whatever that
 * millisecond held; the row's percentiles stay those of the whole run. One thread records at a time
 * (each recording happens-before the next, as the rows' ping-pongs and chains order them); nothing
 * is allocated per iteration.
 */
final class Latencies {
    /** ucx_perftest's TIMING_QUEUE_SIZE. */
    static final int LAST = 2048;

    private final Histogram all = new Histogram(TimeUnit.SECONDS.toNanos(60), 3);
    private final long[] last = new long[LAST];
    private long count;

    /** @param nanos one iteration's latency (a ping-pong's half round trip) */
    void recordValue(long nanos) {
        all.recordValue(nanos);
        last[(int) (count++ & (LAST - 1))] = nanos;
    }

    /** @return every iteration recorded */
    Histogram all() {
        return all;
    }

    /**
     * @return the median of the last {@value #LAST} iterations (of all, if fewer; ucx_perftest's ring
     *     then still holds zeros), in ns, the lower of the two middle ones for an even count as
     *     ucx_perftest takes it; 0 if none
     */
    long lastMedian() {
        int n = (int) Math.min(count, LAST);
        if (n == 0) {
            return 0;
        }
        long[] sorted = Arrays.copyOf(last, n);
        Arrays.sort(sorted);
        return sorted[(n - 1) / 2];
    }
}
