package dev.fenceline.perf;

/**
 * The floor under shared-memory puts, measured in the same run: a copy of the same size between
 * two direct buffers of this process, what a put into a mapped segment is at best.
 */
final class Memcpy {
    private Memcpy() {
    }

    /**
     * One pass (the caller warms up with passes of it: {@link Progress#warmUp}).
     *
     * @param size bytes per copy
     * @param n copies
     * @return the copies' rate
     */
    static PerfResult measure(int size, int n) {
        java.nio.ByteBuffer src = java.nio.ByteBuffer.allocateDirect(size);
        java.nio.ByteBuffer dst = java.nio.ByteBuffer.allocateDirect(size);
        long start = System.nanoTime();
        long sink = copies(src, dst, n);
        double seconds = (System.nanoTime() - start) / 1e9;
        if (sink == 42) {
            System.err.print(""); // keeps the copies observable to the JIT
        }
        return PerfResult.throughput("memcpy", "memcpy", size, n, seconds);
    }

    /** @return a sum of bytes read back, so that the JIT keeps every copy */
    private static long copies(java.nio.ByteBuffer src, java.nio.ByteBuffer dst, int n) {
        int size = src.capacity();
        // A byte to touch in each copy, found with a mask: a division per copy would be most of an
        // 8-byte copy's cost, and no floor.
        int mask = Integer.highestOneBit(size) - 1;
        long sink = 0;
        for (int i = 0; i < n; i++) {
            src.put(i & mask, (byte) i);
            dst.put(0, src, 0, size);
            sink += dst.get(i & mask);
        }
        return sink;
    }
}
