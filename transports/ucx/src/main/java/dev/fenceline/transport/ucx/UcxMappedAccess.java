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
        // Read once: a thread that moves the buffer's position meanwhile cannot take the native copy
        // past its end (each field stays within the capacity, so from + n does too).
        int from = src.position();
        int n = src.limit() - from;
        int at = m.check(key, address, Math.max(0, n), Access.WRITE);
        if (n == Long.BYTES) {
            MappedMemory.putLong(m.view(), at, src);
        } else if (n > 0 && copiesNatively(n, src, nativeFrom)) {
            UcxNative.shim().flu_copy(m.view().addressOffset() + at, BufferUtil.address(src) + from, n);
            Reference.reachabilityFence(src);
            VarHandle.releaseFence(); // as MappedMemory.put: what this thread stores next comes after
        } else {
            MappedMemory.put(m.data(), at, src);
        }
        return true;
    }

    boolean getNow(RemoteKey key, long address, ByteBuffer dst) {
        UcxMapping m = direct(key);
        if (m == null) {
            return false;
        }
        int from = dst.position(); // read once, as in putNow
        int n = dst.limit() - from;
        int at = m.check(key, address, Math.max(0, n), Access.READ);
        if (n > 0 && copiesNatively(n, dst, nativeFrom) && !dst.isReadOnly()) {
            VarHandle.acquireFence(); // as MappedMemory.get: the copy reads after the key table was checked
            UcxNative.shim().flu_copy(BufferUtil.address(dst) + from, m.view().addressOffset() + at, n);
            Reference.reachabilityFence(dst);
        } else {
            MappedMemory.get(m.data(), at, dst);
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
