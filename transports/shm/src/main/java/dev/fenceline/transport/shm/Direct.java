package dev.fenceline.transport.shm;

import dev.fenceline.Access;
import dev.fenceline.AtomicOp;
import dev.fenceline.RemoteAccessException;
import dev.fenceline.RemoteAccessException.Reason;
import dev.fenceline.RemoteKey;
import dev.fenceline.spi.TransportOp;
import dev.fenceline.spi.support.MappedMemory;
import java.nio.ByteBuffer;

/**
 * One-sided access to a peer's region through this process's own mapping of its segment: puts and
 * gets are copies, atomics are atomic instructions on the mapping, all done and remotely visible
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
    private Direct() {
    }

    /** A put done by the calling thread (the fast path). */
    static void put(DataSegment.Peer seg, RemoteKey key, long address, ByteBuffer src) {
        int n = src.remaining();
        int at = checked(seg, key, address, n, Access.WRITE);
        // The branch on the size read before the header's volatile reads, not after: 11.5 ns an
        // 8-byte put against 13.7 (JMH).
        if (n == Long.BYTES) {
            seg.putLong(at, src);
        } else {
            seg.put(at, src, n);
        }
    }

    /** A posted atomic done by the calling thread (the fast path). */
    static void atomicPost(DataSegment.Peer seg, RemoteKey key, long address, AtomicOp op, int width, long operand) {
        seg.atomic(checkedAtomic(seg, key, address, width), op, width, operand);
    }

    /** A get done by the calling thread (the fast path). */
    static void get(DataSegment.Peer seg, RemoteKey key, long address, ByteBuffer dst) {
        MappedMemory.get(seg.data(), checked(seg, key, address, dst.remaining(), Access.READ), dst);
    }

    /** A fetching atomic or (op null) compare-and-swap done by the calling thread; @return the old value */
    static long fetch(DataSegment.Peer seg, RemoteKey key, long address, AtomicOp op, int width, long operand,
            long compare) {
        int at = checkedAtomic(seg, key, address, width);
        return op == null ? MappedMemory.compareAndSwap(seg.data(), at, width, compare, operand)
                : seg.atomic(at, op, width, operand);
    }

    private static int checkedAtomic(DataSegment.Peer seg, RemoteKey key, long address, int width) {
        if (width != Integer.BYTES && width != Long.BYTES) { // the SPI's operation takes any width
            throw new RemoteAccessException(Reason.INVALID_OPERATION, "shm: an atomic of " + width
                    + " bytes (4 or 8)");
        }
        int at = checked(seg, key, address, width, Access.ATOMIC);
        // The offset too: the key's base address is the peer's word, and an aligned address over a
        // misaligned base is a misaligned atomic on the mapping (the data starts 64-byte aligned).
        if (((address | at) & (width - 1)) != 0) {
            throw new RemoteAccessException(Reason.MISALIGNED, "shm: address 0x" + Long.toHexString(address)
                    + " (offset " + at + " in the region of key " + key.shortKey() + ", whose base is 0x"
                    + Long.toHexString(key.baseAddress()) + ") is not aligned to " + width + " bytes");
        }
        return at;
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
        // The segment's own bound, which the accesses by address rest on: a key built in this process
        // may carry any base, and the key's check above then overflows (an offset in front of the data).
        if (offset < 0 || offset > seg.capacity() - (long) width) {
            throw new RemoteAccessException(Reason.OUT_OF_BOUNDS, "shm: address 0x" + Long.toHexString(address)
                    + " + " + width + " is beyond segment " + seg.name());
        }
        return (int) offset;
    }

    /** @return the fetched value (atomics), else 0 */
    static long apply(TransportOp op, DataSegment.Peer seg) {
        return switch (op.kind()) {
            case PUT -> {
                put(seg, op.key(), op.remoteAddress(), op.local());
                yield 0;
            }
            case GET -> {
                get(seg, op.key(), op.remoteAddress(), op.local());
                yield 0;
            }
            case CSWAP -> fetch(seg, op.key(), op.remoteAddress(), null, op.width(), op.operand(), op.compare());
            default -> fetch(seg, op.key(), op.remoteAddress(), op.atomicOp(), op.width(), op.operand(), 0);
        };
    }
}
