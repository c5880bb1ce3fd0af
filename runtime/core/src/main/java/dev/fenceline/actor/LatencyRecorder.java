package dev.fenceline.actor;

import dev.fenceline.Latency;
import org.HdrHistogram.IntCountsHistogram;

/**
 * One latency of one endpoint, recorded by its actor and read by any thread. The histogram
 * (HdrHistogram, two significant digits, microseconds) is made at the first value and grows with the
 * range seen, so an endpoint that never records one holds none; recording allocates nothing after
 * that but the rare resize.
 */
final class LatencyRecorder {
    private IntCountsHistogram histogram;

    /** @param nanos one latency (the actor only) */
    synchronized void record(long nanos) {
        if (histogram == null) {
            histogram = new IntCountsHistogram(2);
        }
        histogram.recordValue(Math.max(1, nanos / 1000));
    }

    /** @return the percentiles so far, in nanoseconds */
    synchronized Latency snapshot() {
        if (histogram == null || histogram.getTotalCount() == 0) {
            return Latency.NONE;
        }
        return new Latency(histogram.getTotalCount(), histogram.getValueAtPercentile(50) * 1000,
                histogram.getValueAtPercentile(99) * 1000, histogram.getValueAtPercentile(99.9) * 1000,
                histogram.getMaxValue() * 1000);
    }
}
