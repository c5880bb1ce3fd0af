package dev.fenceline.transport.ucx;

import dev.fenceline.Access;
import dev.fenceline.AtomicOp;
import dev.fenceline.RemoteKey;
import dev.fenceline.spi.support.MappedMemory;
import java.nio.ByteBuffer;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * A lane's stores, loads and atomics on the calling thread ({@link dev.fenceline.spi.DirectAccess})
 * through UCT's shared-memory pointer to the peer's region ({@link UcxMapping}), checked against the
 * owner's key table ({@link UcxMapping#check}); only while nothing of the lane is outstanding, so post
 * order holds. Takes no lock.
 */
final class UcxMappedAccess {
    private final UcxLane lane;
    private final UcxAgent agent;
    /** Whether the lane's iface reaches the peer's memory directly (shared memory on this host). */
    private final boolean memoryLane;
    /** The lane's data operations queued or unanswered. */
    private final AtomicInteger unanswered;

    UcxMappedAccess(UcxLane lane, UcxAgent agent, boolean memoryLane, AtomicInteger unanswered) {
        this.lane = lane;
        this.agent = agent;
        this.memoryLane = memoryLane;
        this.unanswered = unanswered;
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
        int n = src.remaining();
        int at = m.check(key, address, n, Access.WRITE);
        if (n == Long.BYTES) {
            MappedMemory.putLong(m.view(), at, src);
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
        MappedMemory.get(m.data(), m.check(key, address, dst.remaining(), Access.READ), dst);
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
