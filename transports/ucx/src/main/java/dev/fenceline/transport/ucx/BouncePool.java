package dev.fenceline.transport.ucx;

import java.nio.ByteBuffer;
import java.util.ArrayDeque;

/**
 * Direct buffers that stand in for a heap buffer where UCT needs a native address (progress agent
 * only): a copy in for a put, a copy out for a get. A zero-copy operation may complete after its call
 * returned (cma's does, in the iface's progress), so each operation holds its own buffer until it
 * completes. Buffers come in power-of-two sizes and are kept for reuse up to a bound, so the bulk
 * path allocates nothing once warm.
 */
final class BouncePool {
    private static final int SMALLEST = 4096;
    private static final int CLASSES = 20; // 4 KiB .. 2 GiB
    private final java.util.List<ArrayDeque<ByteBuffer>> free = new java.util.ArrayList<>(CLASSES);
    private final long maxKept;
    private long kept;

    /** @param maxKept the most bytes kept for reuse */
    BouncePool(long maxKept) {
        this.maxKept = maxKept;
        for (int i = 0; i < CLASSES; i++) {
            free.add(new ArrayDeque<>());
        }
    }

    private static int sizeClass(int bytes) {
        int c = 0;
        while ((SMALLEST << c) < bytes) {
            c++;
        }
        return c;
    }

    /**
     * @param bytes how many the operation moves
     * @return a direct buffer of at least that many bytes, position 0, native order
     */
    ByteBuffer take(int bytes) {
        int c = sizeClass(Math.max(1, bytes));
        ByteBuffer b = free.get(c).pollFirst();
        if (b != null) {
            kept -= b.capacity();
            return b.clear();
        }
        return ByteBuffer.allocateDirect(SMALLEST << c).order(java.nio.ByteOrder.nativeOrder());
    }

    /** @param b a buffer from {@link #take}, no longer used by UCT */
    void give(ByteBuffer b) {
        if (kept + b.capacity() <= maxKept) {
            free.get(sizeClass(b.capacity())).addFirst(b);
            kept += b.capacity();
        }
    }

    /** @return bytes kept for reuse */
    long kept() {
        return kept;
    }
}
