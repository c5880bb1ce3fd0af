package dev.fenceline.spi;

import dev.fenceline.AtomicOp;
import java.nio.ByteBuffer;

/**
 * A worker's memory and active-message handlers, as seen by transports that apply incoming
 * operations. Every method validates key, bounds and alignment first and throws a typed
 * {@link dev.fenceline.FencelineException} without touching memory when they are wrong.
 */
public interface RemoteAccessTarget {
    /**
     * @param keyId the region's key
     * @param address first byte to write
     * @param src the bytes (position to limit); not modified
     */
    void put(long keyId, long address, ByteBuffer src);

    /**
     * One put whose bytes arrived in pieces (a frame spread over several socket reads): the key and
     * the whole range are checked before any byte is written, then the parts are written one after
     * another from {@code address}. The default gathers them into one buffer first; an
     * implementation should write them in place.
     *
     * @param keyId the region's key
     * @param address first byte to write
     * @param parts the bytes, in order (each from position to limit); not modified
     */
    default void put(long keyId, long address, ByteBuffer[] parts) {
        long total = 0;
        for (ByteBuffer b : parts) {
            total += b.remaining();
        }
        if (total > Integer.MAX_VALUE) {
            throw new IllegalArgumentException("a put of " + total + " bytes in " + parts.length + " parts");
        }
        ByteBuffer all = ByteBuffer.allocate((int) total);
        for (ByteBuffer b : parts) {
            all.put(b.duplicate());
        }
        put(keyId, address, all.flip());
    }

    /**
     * @param keyId the region's key
     * @param address first byte to read
     * @param dst receives {@code dst.remaining()} bytes at its position; its position is not moved
     */
    void get(long keyId, long address, ByteBuffer dst);

    /**
     * @param keyId the region's key
     * @param address a {@code width}-aligned address
     * @param width 4 or 8
     * @param op the operation
     * @param operand the operand (low 32 bits for width 4)
     * @return the previous value (sign-extended for width 4)
     */
    long atomic(long keyId, long address, int width, AtomicOp op, long operand);

    /**
     * @param keyId the region's key
     * @param address a {@code width}-aligned address
     * @param width 4 or 8
     * @param expected the value to compare with
     * @param desired the value to store
     * @return the previous value
     */
    long compareAndSwap(long keyId, long address, int width, long expected, long desired);

    /**
     * Runs the handler of {@code id}. The buffers are the handler's for the call: it may move their
     * position, limit, mark and byte order. A read-only big-endian one goes to the handler as it is,
     * so the transport passes a view made for this call (a fresh slice) that it does not read
     * after; anything else goes as a read-only view of it.
     *
     * @param id the handler id
     * @param header the header, from its position to its limit
     * @param payload the payload, from its position to its limit
     */
    void activeMessage(int id, ByteBuffer header, ByteBuffer payload);
}
