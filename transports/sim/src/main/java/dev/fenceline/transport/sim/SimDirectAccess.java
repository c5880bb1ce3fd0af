package dev.fenceline.transport.sim;

import dev.fenceline.AtomicOp;
import dev.fenceline.RemoteKey;
import dev.fenceline.spi.RemoteAccessTarget;
import java.nio.ByteBuffer;

/**
 * A sim lane's fast path by grant ({@link dev.fenceline.spi.DirectAccess}): stores, loads and atomics
 * the calling thread makes straight on the peer's memory, while the lane allows it. Takes no lock;
 * static, so that an idle lane carries nothing for it.
 */
final class SimDirectAccess {
    private SimDirectAccess() {
    }

    /**
     * The peer's memory, if the calling thread may act on it now: the lane is live and reachable
     * and nothing it was given is still on its way (so the lane keeps post order).
     */
    private static RemoteAccessTarget directTarget(SimLane lane) {
        if (!lane.origin().settings().directAccess() || lane.isDead() || lane.cut() || lane.undelivered() != 0) {
            return null;
        }
        return lane.peer().target();
    }

    static boolean putNow(SimLane lane, RemoteKey key, long address, ByteBuffer src) {
        RemoteAccessTarget t = directTarget(lane);
        if (t == null) {
            return false;
        }
        t.put(key.keyId(), address, src);
        return true;
    }

    static boolean getNow(SimLane lane, RemoteKey key, long address, ByteBuffer dst) {
        RemoteAccessTarget t = directTarget(lane);
        if (t == null) {
            return false;
        }
        t.get(key.keyId(), address, dst);
        return true;
    }

    static boolean atomicPostNow(SimLane lane, RemoteKey key, long address, AtomicOp op, int width, long operand) {
        RemoteAccessTarget t = directTarget(lane);
        if (t == null) {
            return false;
        }
        t.atomic(key.keyId(), address, width, op, operand);
        return true;
    }

    static Long atomicFetchNow(SimLane lane, RemoteKey key, long address, AtomicOp op, int width, long operand,
            long compare) {
        RemoteAccessTarget t = directTarget(lane);
        if (t == null) {
            return null;
        }
        return op == null ? t.compareAndSwap(key.keyId(), address, width, compare, operand)
                : t.atomic(key.keyId(), address, width, op, operand);
    }
}
