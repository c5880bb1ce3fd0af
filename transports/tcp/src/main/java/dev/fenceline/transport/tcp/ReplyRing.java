package dev.fenceline.transport.tcp;

import java.nio.ByteBuffer;
import java.util.concurrent.atomic.AtomicLong;

/**
 * The operations a lane has sent and not yet had answered, in send order. The target answers in
 * the order it received, so every reply must match the oldest entry: that is both the bookkeeping
 * (no map, no allocation per operation) and a protocol check. One producer at a time (the endpoint
 * actor, or a thread posting under the endpoint's grant, under the lane's lock) and a single
 * consumer (the channel's event loop). An entry a calling thread posted keeps that operation, which
 * its answer completes (or, if the lane ends first, which goes back to the endpoint).
 */
final class ReplyRing {
    static final byte OP = 0;
    static final byte GET = 1;
    static final byte FLUSH = 2;
    /** Added to {@link #OP} or {@link #GET}: the entry's operation was posted by a calling thread. */
    static final byte POSTED = 4;

    private final long[] tokens;
    private final int[] bytes;
    private final byte[] kinds;
    /** Per entry: a GET's buffer, a posted operation, or null. */
    private final Object[] refs;
    private final int mask;
    private final AtomicLong head = new AtomicLong(); // next to be answered; written by the consumer
    private final AtomicLong tail = new AtomicLong(); // next free; written by the producer

    /** @param capacity at least the number of entries ever outstanding at once */
    ReplyRing(int capacity) {
        int size = Integer.highestOneBit(Math.max(1, capacity - 1)) << 1;
        tokens = new long[size];
        bytes = new int[size];
        kinds = new byte[size];
        refs = new Object[size];
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
    boolean offer(long token, byte kind, int payload, Object ref) {
        long t = tail.get();
        if (t - head.get() >= tokens.length) {
            return false;
        }
        int i = (int) t & mask;
        tokens[i] = token;
        kinds[i] = kind;
        bytes[i] = payload;
        refs[i] = ref;
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

    /** @return the oldest entry's kind ({@link #OP}, {@link #GET} or {@link #FLUSH}) */
    byte kind() {
        return (byte) (kinds[(int) head.get() & mask] & ~POSTED);
    }

    /** @return the oldest entry's posted operation, or null if the endpoint actor posted it */
    dev.fenceline.spi.PostedOperation posted() {
        int i = (int) head.get() & mask;
        return (kinds[i] & POSTED) != 0 ? (dev.fenceline.spi.PostedOperation) refs[i] : null;
    }

    /**
     * Hands every outstanding posted operation, oldest first, to {@code action} and forgets it (the
     * consumer's pops are excluded by the lane's lock; called once the lane ended).
     *
     * @param action what to do with each
     */
    void takePosted(java.util.function.Consumer<dev.fenceline.spi.PostedOperation> action) {
        for (long h = head.get(), t = tail.get(); h < t; h++) {
            int i = (int) h & mask;
            if ((kinds[i] & POSTED) != 0 && refs[i] != null) {
                dev.fenceline.spi.PostedOperation p = (dev.fenceline.spi.PostedOperation) refs[i];
                refs[i] = null;
                action.accept(p);
            }
        }
    }

    int payload() {
        return bytes[(int) head.get() & mask];
    }

    /** @return the oldest entry's GET buffer (its own, or its posted operation's), or null */
    ByteBuffer sink() {
        Object r = refs[(int) head.get() & mask];
        return r instanceof ByteBuffer b ? b
                : r instanceof dev.fenceline.spi.PostedOperation p ? p.op().local() : null;
    }

    /** After the connection ended (posted operations taken first): forgets every buffer the entries refer to. */
    void dropSinks() {
        java.util.Arrays.fill(refs, null);
    }

    /** Consumer only: drops the oldest entry. */
    void pop() {
        long h = head.get();
        refs[(int) h & mask] = null;
        head.lazySet(h + 1);
    }
}
