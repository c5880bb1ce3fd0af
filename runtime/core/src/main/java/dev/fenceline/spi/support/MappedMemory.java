package dev.fenceline.spi.support;

import dev.fenceline.AtomicOp;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import org.agrona.concurrent.AtomicBuffer;

/**
 * One-sided access to a peer's memory through this process's own mapping of it (a shared segment,
 * a UCT shared-memory key's pointer): puts and gets are copies, atomics are atomic instructions on
 * the mapping (VarHandle operations, or the address-based view's for the hot cases), all done and
 * remotely visible when the call returns. The caller has checked key,
 * access, bounds and alignment; these only touch memory.
 *
 * <p>Memory ordering: the mapping is ordinary cache-coherent memory shared with the owner's process.
 * Atomics are sequentially consistent read-modify-writes. A put is a plain copy followed by a
 * release fence, so no later store of this origin (a flag, the next put) becomes visible before it;
 * a reader that acquires (a VarHandle getAcquire, or an atomic on the flag) then sees the whole put.
 * A get acquires before it copies.
 */
public final class MappedMemory {
    private static final VarHandle INT = MethodHandles.byteBufferViewVarHandle(int[].class, ByteOrder.nativeOrder());
    private static final VarHandle LONG = MethodHandles.byteBufferViewVarHandle(long[].class, ByteOrder.nativeOrder());

    private MappedMemory() {
    }

    /**
     * @param data the mapping
     * @param at the first byte's offset in it
     * @param src the bytes (position to limit; not moved)
     */
    public static void put(ByteBuffer data, int at, ByteBuffer src) {
        int n = src.remaining();
        if (n == 8) { // one store: a bulk copy's checks and stub call were most of an 8-byte put (perf record)
            LONG.set(data, at, (long) LONG.get(src, src.position()));
        } else {
            data.put(at, src, src.position(), n);
        }
        VarHandle.releaseFence();
    }

    /**
     * The hot size of a fast path's put, 8 bytes, as one store through an address-based view of the
     * mapping (a {@code ByteBuffer} view handle's scope, read-only and index checks cost more than
     * the store), then the release fence of every put. The caller has its size at hand for its own
     * checks and branches on it; other sizes go to {@link #put(ByteBuffer, int, ByteBuffer)}.
     *
     * @param view the mapping, address-based (the caller checked the range, as for every call here)
     * @param at the first byte's offset in it
     * @param src exactly 8 bytes to write at its position (not moved)
     */
    public static void putLong(AtomicBuffer view, int at, ByteBuffer src) {
        view.putLong(at, (long) LONG.get(src, src.position()));
        VarHandle.releaseFence();
    }

    /**
     * An atomic on a mapping also reached through an address-based view: the hot one, a 64-bit ADD,
     * through the view; the others as {@link #atomic(ByteBuffer, int, AtomicOp, int, long)}.
     *
     * @param data the mapping
     * @param view the same bytes, address-based
     * @param at an offset aligned to {@code width}
     * @param op the operation
     * @param width 4 or 8
     * @param operand the operand (its low 32 bits for width 4)
     * @return the old value (sign-extended for width 4)
     */
    public static long atomic(ByteBuffer data, AtomicBuffer view, int at, AtomicOp op, int width, long operand) {
        return width == Long.BYTES && op == AtomicOp.ADD ? view.getAndAddLong(at, operand)
                : atomic(data, at, op, width, operand);
    }

    /**
     * @param data the mapping
     * @param at the first byte's offset in it
     * @param dst receives {@code dst.remaining()} bytes at its position (not moved)
     */
    public static void get(ByteBuffer data, int at, ByteBuffer dst) {
        VarHandle.acquireFence();
        int n = dst.remaining();
        if (n == 8) {
            LONG.set(dst, dst.position(), (long) LONG.get(data, at));
        } else {
            dst.put(dst.position(), data, at, n);
        }
    }

    /**
     * A fetching atomic (a posted one is the same, its result unused).
     *
     * @param data the mapping
     * @param at an offset aligned to {@code width}
     * @param op the operation
     * @param width 4 or 8
     * @param operand the operand (its low 32 bits for width 4)
     * @return the old value (sign-extended for width 4)
     */
    public static long atomic(ByteBuffer data, int at, AtomicOp op, int width, long operand) {
        if (width == 8) {
            return switch (op) {
                case ADD -> (long) LONG.getAndAdd(data, at, operand);
                case AND -> (long) LONG.getAndBitwiseAnd(data, at, operand);
                case OR -> (long) LONG.getAndBitwiseOr(data, at, operand);
                case XOR -> (long) LONG.getAndBitwiseXor(data, at, operand);
                case SWAP -> (long) LONG.getAndSet(data, at, operand);
            };
        }
        int v = (int) operand;
        return switch (op) {
            case ADD -> (int) INT.getAndAdd(data, at, v);
            case AND -> (int) INT.getAndBitwiseAnd(data, at, v);
            case OR -> (int) INT.getAndBitwiseOr(data, at, v);
            case XOR -> (int) INT.getAndBitwiseXor(data, at, v);
            case SWAP -> (int) INT.getAndSet(data, at, v);
        };
    }

    /**
     * @param data the mapping
     * @param at an offset aligned to {@code width}
     * @param width 4 or 8
     * @param expected the value to compare with
     * @param desired the value to store
     * @return the old value (sign-extended for width 4)
     */
    public static long compareAndSwap(ByteBuffer data, int at, int width, long expected, long desired) {
        return width == 8 ? (long) LONG.compareAndExchange(data, at, expected, desired)
                : (int) INT.compareAndExchange(data, at, (int) expected, (int) desired);
    }
}
