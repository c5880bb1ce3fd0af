package dev.fenceline.transport.shm;

import dev.fenceline.Access;
import dev.fenceline.AtomicOp;
import dev.fenceline.RemoteAccessException;
import dev.fenceline.RemoteAccessException.Reason;
import dev.fenceline.RemoteKey;
import dev.fenceline.spi.TransportOp;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;

/**
 * One-sided access to a peer's region through this process's own mapping of its segment: puts and
 * gets are copies, atomics are VarHandle operations on the mapping, all done and remotely visible
 * when the call returns.
 *
 * <p>Memory ordering: the mapping is ordinary cache-coherent memory shared with the owner's
 * process. Atomics are sequentially consistent read-modify-writes. A put is a plain copy followed
 * by a release fence, so no later store of this origin (a flag, the next put) becomes visible
 * before it; a reader that acquires (a VarHandle getAcquire, or an atomic on the flag) then sees the
 * whole put. The header check happens before the access: a region closed concurrently may take one
 * last access, as on any one-sided transport.
 */
final class Direct {
    private static final VarHandle INT = MethodHandles.byteBufferViewVarHandle(int[].class, ByteOrder.nativeOrder());
    private static final VarHandle LONG = MethodHandles.byteBufferViewVarHandle(long[].class, ByteOrder.nativeOrder());

    private Direct() {
    }

    /** A put done by the calling thread (the fast path). */
    static void put(DataSegment.Peer seg, RemoteKey key, long address, ByteBuffer src) {
        int n = src.remaining();
        int at = checked(seg, key, address, n, Access.WRITE);
        seg.data().put(at, src, src.position(), n);
        VarHandle.releaseFence();
    }

    /** A posted atomic done by the calling thread (the fast path). */
    static void atomicPost(DataSegment.Peer seg, RemoteKey key, long address, AtomicOp op, int width, long operand) {
        int at = checked(seg, key, address, width, Access.ATOMIC);
        if ((address & (width - 1)) != 0) {
            throw new RemoteAccessException(Reason.MISALIGNED, "shm: address 0x" + Long.toHexString(address)
                    + " is not aligned to " + width + " bytes");
        }
        ByteBuffer b = seg.data();
        if (width == 8) {
            switch (op) {
                case ADD -> LONG.getAndAdd(b, at, operand);
                case AND -> LONG.getAndBitwiseAnd(b, at, operand);
                case OR -> LONG.getAndBitwiseOr(b, at, operand);
                case XOR -> LONG.getAndBitwiseXor(b, at, operand);
                case SWAP -> LONG.getAndSet(b, at, operand);
            }
        } else {
            int v = (int) operand;
            switch (op) {
                case ADD -> INT.getAndAdd(b, at, v);
                case AND -> INT.getAndBitwiseAnd(b, at, v);
                case OR -> INT.getAndBitwiseOr(b, at, v);
                case XOR -> INT.getAndBitwiseXor(b, at, v);
                case SWAP -> INT.getAndSet(b, at, v);
            }
        }
    }

    /** A get done by the calling thread (the fast path). */
    static void get(DataSegment.Peer seg, RemoteKey key, long address, ByteBuffer dst) {
        int n = dst.remaining();
        int at = checked(seg, key, address, n, Access.READ);
        VarHandle.acquireFence();
        dst.put(dst.position(), seg.data(), at, n);
    }

    /** A fetching atomic or (op null) compare-and-swap done by the calling thread; @return the old value */
    static long fetch(DataSegment.Peer seg, RemoteKey key, long address, AtomicOp op, int width, long operand,
            long compare) {
        int at = checked(seg, key, address, width, Access.ATOMIC);
        if ((address & (width - 1)) != 0) {
            throw new RemoteAccessException(Reason.MISALIGNED, "shm: address 0x" + Long.toHexString(address)
                    + " is not aligned to " + width + " bytes");
        }
        ByteBuffer b = seg.data();
        if (width == 8) {
            if (op == null) {
                return (long) LONG.compareAndExchange(b, at, compare, operand);
            }
            return switch (op) {
                case ADD -> (long) LONG.getAndAdd(b, at, operand);
                case AND -> (long) LONG.getAndBitwiseAnd(b, at, operand);
                case OR -> (long) LONG.getAndBitwiseOr(b, at, operand);
                case XOR -> (long) LONG.getAndBitwiseXor(b, at, operand);
                case SWAP -> (long) LONG.getAndSet(b, at, operand);
            };
        }
        int v = (int) operand;
        if (op == null) {
            return (int) INT.compareAndExchange(b, at, (int) compare, v);
        }
        return switch (op) {
            case ADD -> (int) INT.getAndAdd(b, at, v);
            case AND -> (int) INT.getAndBitwiseAnd(b, at, v);
            case OR -> (int) INT.getAndBitwiseOr(b, at, v);
            case XOR -> (int) INT.getAndBitwiseXor(b, at, v);
            case SWAP -> (int) INT.getAndSet(b, at, v);
        };
    }

    /**
     * Checks key, state, access and range against the segment: the access the owner wrote into the
     * header, not what the key claims. @return the offset in the segment's data
     */
    private static int checked(DataSegment.Peer seg, RemoteKey key, long address, int width, Access needed) {
        if (seg.keyId() != key.keyId()) {
            throw new RemoteAccessException(Reason.UNKNOWN_KEY, "shm: key " + key.shortKey()
                    + " does not match segment " + seg.name() + " (forged or stale key)");
        }
        if (!seg.permits(needed)) {
            throw new RemoteAccessException(Reason.ACCESS_DENIED, "shm: the region of key " + key.shortKey()
                    + " in segment " + seg.name() + " was registered without " + needed);
        }
        if (!seg.open()) {
            throw new RemoteAccessException(Reason.REGION_CLOSED, "shm: the region of key " + key.shortKey()
                    + " was closed by its owner");
        }
        key.checkBounds(address, width);
        long offset = address - key.baseAddress();
        if (offset + width > seg.data().capacity()) {
            throw new RemoteAccessException(Reason.OUT_OF_BOUNDS, "shm: address 0x" + Long.toHexString(address)
                    + " + " + width + " is beyond segment " + seg.name());
        }
        return (int) offset;
    }

    /** @return the fetched value (atomics), else 0 */
    static long apply(TransportOp op, DataSegment.Peer seg) {
        int width = switch (op.kind()) {
            case PUT, GET -> op.local().remaining();
            default -> op.width();
        };
        int at = checked(seg, op.key(), op.remoteAddress(), width, switch (op.kind()) {
            case PUT -> Access.WRITE;
            case GET -> Access.READ;
            default -> Access.ATOMIC;
        });
        ByteBuffer data = seg.data();
        switch (op.kind()) {
            case PUT -> {
                ByteBuffer src = op.local();
                data.put(at, src, src.position(), width);
                VarHandle.releaseFence();
                return 0;
            }
            case GET -> {
                ByteBuffer dst = op.local();
                VarHandle.acquireFence();
                dst.put(dst.position(), data, at, width);
                return 0;
            }
            default -> {
                if ((op.remoteAddress() & (width - 1)) != 0) {
                    throw new RemoteAccessException(Reason.MISALIGNED, "shm: address 0x"
                            + Long.toHexString(op.remoteAddress()) + " is not aligned to " + width + " bytes");
                }
                return width == 8 ? atomic64(op, data, at) : atomic32(op, data, at);
            }
        }
    }

    private static long atomic64(TransportOp op, ByteBuffer b, int at) {
        if (op.kind() == TransportOp.Kind.CSWAP) {
            return (long) LONG.compareAndExchange(b, at, op.compare(), op.operand());
        }
        long v = op.operand();
        return switch (op.atomicOp()) {
            case ADD -> (long) LONG.getAndAdd(b, at, v);
            case AND -> (long) LONG.getAndBitwiseAnd(b, at, v);
            case OR -> (long) LONG.getAndBitwiseOr(b, at, v);
            case XOR -> (long) LONG.getAndBitwiseXor(b, at, v);
            case SWAP -> (long) LONG.getAndSet(b, at, v);
        };
    }

    private static long atomic32(TransportOp op, ByteBuffer b, int at) {
        if (op.kind() == TransportOp.Kind.CSWAP) {
            return (int) INT.compareAndExchange(b, at, (int) op.compare(), (int) op.operand());
        }
        int v = (int) op.operand();
        return switch (op.atomicOp()) {
            case ADD -> (int) INT.getAndAdd(b, at, v);
            case AND -> (int) INT.getAndBitwiseAnd(b, at, v);
            case OR -> (int) INT.getAndBitwiseOr(b, at, v);
            case XOR -> (int) INT.getAndBitwiseXor(b, at, v);
            case SWAP -> (int) INT.getAndSet(b, at, v);
        };
    }
}
