package dev.fenceline.transport.tcp;

import java.nio.ByteBuffer;
import java.util.concurrent.atomic.AtomicLong;

/**
 * The operations a lane has sent and not yet had answered, in send order. The target answers in
 * the order it received, so every reply must match the oldest entry: that is both the bookkeeping
 * (no map, no allocation per operation) and a protocol check. Single producer (the endpoint actor
 * posting) and single consumer (the channel's event loop).
 */
final class ReplyRing {
    static final byte OP = 0;
    static final byte GET = 1;
    static final byte FLUSH = 2;

    private final long[] tokens;
    private final int[] bytes;
    private final byte[] kinds;
    private final ByteBuffer[] sinks;
    private final int mask;
    private final AtomicLong head = new AtomicLong(); // next to be answered; written by the consumer
    private final AtomicLong tail = new AtomicLong(); // next free; written by the producer

    /** @param capacity at least the number of entries ever outstanding at once */
    ReplyRing(int capacity) {
        int size = Integer.highestOneBit(Math.max(1, capacity - 1)) << 1;
        tokens = new long[size];
        bytes = new int[size];
        kinds = new byte[size];
        sinks = new ByteBuffer[size];
        mask = size - 1;
    }

    /** @return how many entries are outstanding */
    int size() {
        return (int) (tail.get() - head.get());
    }

    int capacity() {
        return tokens.length;
    }

    /**
     * Producer only.
     *
     * @return false if the ring is full
     */
    boolean offer(long token, byte kind, int payload, ByteBuffer sink) {
        long t = tail.get();
        if (t - head.get() >= tokens.length) {
            return false;
        }
        int i = (int) t & mask;
        tokens[i] = token;
        kinds[i] = kind;
        bytes[i] = payload;
        sinks[i] = sink;
        tail.lazySet(t + 1); // publishes the slot to the consumer
        return true;
    }

    /** Consumer only. @return whether an entry is outstanding */
    boolean isEmpty() {
        return head.get() == tail.get();
    }

    long token() {
        return tokens[(int) head.get() & mask];
    }

    byte kind() {
        return kinds[(int) head.get() & mask];
    }

    int payload() {
        return bytes[(int) head.get() & mask];
    }

    ByteBuffer sink() {
        return sinks[(int) head.get() & mask];
    }

    /** Consumer only, after the connection ended: forgets every buffer the entries refer to. */
    void dropSinks() {
        java.util.Arrays.fill(sinks, null);
    }

    /** Consumer only: drops the oldest entry. */
    void pop() {
        long h = head.get();
        sinks[(int) h & mask] = null;
        head.lazySet(h + 1);
    }
}
