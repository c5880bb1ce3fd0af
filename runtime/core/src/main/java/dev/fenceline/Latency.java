package dev.fenceline;

/**
 * Percentiles of a latency, in nanoseconds (recorded with two significant digits).
 *
 * @param count how many were recorded
 * @param p50 the median
 * @param p99 the 99th percentile
 * @param p999 the 99.9th percentile
 * @param max the largest
 */
public record Latency(long count, long p50, long p99, long p999, long max) {
    /** Nothing recorded. */
    public static final Latency NONE = new Latency(0, 0, 0, 0, 0);
}
