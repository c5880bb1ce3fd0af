package dev.fenceline.perf;

/**
 * How many operations a row measures and warms up with, from -n, -w and --max-bytes.
 *
 * @param iterations -n
 * @param warmup -w, or null where not given
 * @param maxBytes --max-bytes
 */
record PerfCounts(int iterations, Integer warmup, long maxBytes) {
    /** Warm-up iterations when -w is not given, and fewer are measured than this: as many as are. */
    static final int DEFAULT_WARMUP = 2000;

    /** @return the measured count: -n, under the caps for large messages ({@link #capped}) */
    int measured(PerfTest t, int size) {
        return capped(t, size, iterations);
    }

    /**
     * The warm-up's count: -w as given, under the caps of the measured count but not under the count
     * itself, since code run once per operation reaches C2 only after thousands of calls (a 1 MiB
     * stream's per-frame path over tcp was compiled 4 s into a measured run that followed 2,000
     * warm-up puts). Without -w, the default or the measured count, whichever is fewer.
     *
     * @return the warm-up's count
     */
    int warmups(PerfTest t, int size) {
        return capped(t, size, warmup != null ? warmup : Math.min(DEFAULT_WARMUP, measured(t, size)));
    }

    /** Latency tests of 1 MiB or more stop at 2,000; streams of big messages at --max-bytes, never below 100. */
    private int capped(PerfTest t, int size, int requested) {
        if (t.kind == PerfTest.Kind.LATENCY) {
            return size >= (1 << 20) ? Math.min(requested, 2000) : requested;
        }
        return (int) Math.min(requested, Math.max(100, maxBytes / Math.max(1, size)));
    }
}
