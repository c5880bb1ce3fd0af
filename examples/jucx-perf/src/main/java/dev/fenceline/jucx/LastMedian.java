package dev.fenceline.jucx;

import java.util.Arrays;

/**
 * The latency ucx_perftest reports for a ping-pong: the median of its last 2,048 iterations (a ring
 * it writes each iteration), the lower of the two middle ones, not of the whole run. JUCX's rows
 * take the same statistic so that the three tools' figures set like beside like. One thread only.
 */
final class LastMedian {
    /** ucx_perftest's TIMING_QUEUE_SIZE. */
    static final int LAST = 2048;

    private final long[] last = new long[LAST];
    private long count;

    void recordValue(long nanos) {
        last[(int) (count++ & (LAST - 1))] = nanos;
    }

    /** @return the median of the last {@value #LAST} values (of all, if fewer), in ns; 0 if none */
    long median() {
        int n = (int) Math.min(count, LAST);
        if (n == 0) {
            return 0;
        }
        long[] sorted = Arrays.copyOf(last, n);
        Arrays.sort(sorted);
        return sorted[(n - 1) / 2];
    }
}
