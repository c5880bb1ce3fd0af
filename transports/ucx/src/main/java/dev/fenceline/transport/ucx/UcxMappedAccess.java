package dev.fenceline.transport.ucx;

import dev.fenceline.Access;
import dev.fenceline.AtomicOp;
import dev.fenceline.RemoteKey;
import dev.fenceline.spi.support.MappedMemory;
import java.lang.invoke.VarHandle;
import java.lang.ref.Reference;
import java.nio.ByteBuffer;
import java.util.concurrent.atomic.AtomicInteger;
import org.agrona.BufferUtil;

/**
 * A lane's stores, loads and atomics on the calling thread ({@link dev.fenceline.spi.DirectAccess})
 * through UCT's shared-memory pointer to the peer's region ({@link UcxMapping}), checked against the
 * owner's key table ({@link UcxMapping#check}); only while nothing of the lane is outstanding, so post
 * order holds. Takes no lock. Large copies between a direct buffer and the mapping go through
 * {@code libfenceline-uct} ({@link Shim#flu_copy}), whose string move copies a mebibyte faster than the
 * JVM's vector loop; a fault there ends the process where the JVM's copy throws, which a peer that
 * shrinks its segment can already cause through UCT's own stores into its queue.
 */
final class UcxMappedAccess {
    private final UcxLane lane;
    private final UcxAgent agent;
    /** Whether the lane's iface reaches the peer's memory directly (shared memory on this host). */
    private final boolean memoryLane;
    /** The lane's data operations queued or unanswered. */
    private final AtomicInteger unanswered;
    /** Copies of this many bytes and more take the native copy; {@code Integer.MAX_VALUE}: none. */
    private final int nativeFrom;

    UcxMappedAccess(UcxLane lane, UcxAgent agent, boolean memoryLane, AtomicInteger unanswered) {
        this.lane = lane;
        this.agent = agent;
        this.memoryLane = memoryLane;
        this.unanswered = unanswered;
        this.nativeFrom = agent.nativeCopyFrom;
    }

    /** @return the smallest access the native copy takes; {@code Integer.MAX_VALUE}: none */
    int nativeFrom() {
        return nativeFrom;
    }

    /**
     * @param n the access's bytes
     * @param buffer the caller's buffer
     * @param nativeFrom the smallest access the native copy takes
     * @return whether the native copy moves them: a direct buffer (it has an address), large enough
     *     for the call to cost less than the copy gains
     */
    static boolean copiesNatively(int n, ByteBuffer buffer, int nativeFrom) {
        return n >= nativeFrom && buffer.isDirect();
    }

    /**
     * @return the key's region as this process maps it, if the agent published it, this lane reaches
     *     its owner's memory, and nothing of the lane is outstanding (so post order holds); else null
     */
    private UcxMapping direct(RemoteKey key) {
        Object c = key.transportCache();
        if (!(c instanceof UcxMapping m) || m.owner() != agent || !memoryLane || !m.peer().equals(lane.channel.peer.id)
                || !lane.isLive() || unanswered.get() != 0) {
            return null;
        }
        return m;
    }

    /** A store through UCT's shared-memory pointer, on the calling thread, checked against the key table. */
    boolean putNow(RemoteKey key, long address, ByteBuffer src) {
        UcxMapping m = direct(key);
        if (m == null) {
            return false;
        }
        // Read once, and every copy below takes these: a thread that moves the buffer's position
        // meanwhile cannot take a copy past the buffer or past the range checked (each field stays
        // within the capacity, so from + n does too).
        int from = src.position();
        int n = Math.max(0, src.limit() - from);
        int at = m.check(key, address, n, Access.WRITE);
        if (n == Long.BYTES) {
            MappedMemory.putLong(m.view(), at, src); // the hot size: one store, then the release fence
            return true;
        }
        if (copiesNatively(n, src, nativeFrom)) {
            UcxNative.shim().flu_copy(m.view().addressOffset() + at, BufferUtil.address(src) + from, n);
            Reference.reachabilityFence(src);
        } else {
            m.data().put(at, src, from, n);
        }
        VarHandle.releaseFence(); // as MappedMemory.put: what this thread stores next comes after
        return true;
    }

    boolean getNow(RemoteKey key, long address, ByteBuffer dst) {
        UcxMapping m = direct(key);
        if (m == null) {
            return false;
        }
        int from = dst.position(); // read once, as in putNow
        int n = Math.max(0, dst.limit() - from);
        int at = m.check(key, address, n, Access.READ);
        if (n == Long.BYTES) {
            MappedMemory.get(m.data(), at, dst); // the hot size: one load
            return true;
        }
        VarHandle.acquireFence(); // as MappedMemory.get: the copy reads after the key table was checked
        if (copiesNatively(n, dst, nativeFrom) && !dst.isReadOnly()) {
            UcxNative.shim().flu_copy(BufferUtil.address(dst) + from, m.view().addressOffset() + at, n);
            Reference.reachabilityFence(dst);
        } else {
            dst.put(from, m.data(), at, n);
        }
        return true;
    }

    boolean atomicPostNow(RemoteKey key, long address, AtomicOp op, int width, long operand) {
        UcxMapping m = direct(key);
        if (m == null) {
            return false;
        }
        MappedMemory.atomic(m.data(), m.view(), m.checkAtomic(key, address, width), op, width, operand);
        return true;
    }

    Long atomicFetchNow(RemoteKey key, long address, AtomicOp op, int width, long operand, long compare) {
        UcxMapping m = direct(key);
        if (m == null) {
            return null;
        }
        int at = m.checkAtomic(key, address, width);
        return op == null ? MappedMemory.compareAndSwap(m.data(), at, width, compare, operand)
                : MappedMemory.atomic(m.data(), m.view(), at, op, width, operand);
    }
}
