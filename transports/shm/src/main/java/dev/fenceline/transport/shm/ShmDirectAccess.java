package dev.fenceline.transport.shm;

import dev.fenceline.AtomicOp;
import dev.fenceline.RemoteKey;
import java.nio.ByteBuffer;
import java.util.IdentityHashMap;

/**
 * A lane's RMA and atomics straight into this process's mapping of the peer's segment ({@link Direct}),
 * only while no ring message of the lane is unanswered so post order holds: calling threads' under the
 * endpoint's grant ({@link dev.fenceline.spi.DirectAccess}) and the endpoint actor's key lookup, taking
 * no lock, and static so that an idle lane carries nothing for it.
 */
final class ShmDirectAccess {
    private ShmDirectAccess() {
    }

    /**
     * @return the key's segment as this process maps it, if the lane is live and none of its ring
     *     messages is unanswered (so post order holds); else null: the operation takes the ring
     */
    private static DataSegment.Peer reachable(ShmLane lane, RemoteKey key) {
        return lane.isLive() && lane.unanswered == 0 ? lane.transport.peerSegment(key) : null;
    }

    /** The fast path: any thread, while the endpoint's grant holds; only with no ring message pending. */
    static boolean putNow(ShmLane lane, RemoteKey key, long address, ByteBuffer src) {
        DataSegment.Peer seg = reachable(lane, key);
        if (seg == null) {
            return false;
        }
        Direct.put(seg, key, address, src);
        return true;
    }

    static boolean atomicPostNow(ShmLane lane, RemoteKey key, long address, AtomicOp op, int width, long operand) {
        DataSegment.Peer seg = reachable(lane, key);
        if (seg == null) {
            return false;
        }
        Direct.atomicPost(seg, key, address, op, width, operand);
        return true;
    }

    static boolean getNow(ShmLane lane, RemoteKey key, long address, ByteBuffer dst) {
        DataSegment.Peer seg = reachable(lane, key);
        if (seg == null) {
            return false;
        }
        Direct.get(seg, key, address, dst);
        return true;
    }

    static Long atomicFetchNow(ShmLane lane, RemoteKey key, long address, AtomicOp op, int width, long operand,
            long compare) {
        DataSegment.Peer seg = reachable(lane, key);
        return seg == null ? null : Direct.fetch(seg, key, address, op, width, operand, compare);
    }

    /**
     * Endpoint actor: drops the lane's cached segments their owners closed (a cache miss, rare,
     * pays for it), so that keys no longer used keep no unlinked file's memory mapped.
     */
    static void forgetClosed(ShmLane lane) {
        if (lane.segments != null) {
            lane.segments.values().removeIf(seg -> seg != null && !seg.open());
        }
    }

    /**
     * Endpoint actor: the peer segment behind a key (null: not directly reachable), cached on the
     * lane. One its owner closed is returned (the access fails as closed) but not kept: its mapping
     * would hold the unlinked file's memory for the lane's life. A miss is kept only for a key that
     * names no segment (registered memory); a segment this process could not map is the worker's to
     * try again after a while ({@link ShmMemory}).
     */
    static DataSegment.Peer segment(ShmLane lane, RemoteKey key) {
        if (lane.segments == null) {
            lane.segments = new IdentityHashMap<>(4); // grows if need be
        } else if (lane.segments.containsKey(key)) {
            DataSegment.Peer cached = lane.segments.get(key);
            if (cached != null && !cached.open()) {
                lane.segments.remove(key);
            }
            return cached;
        }
        DataSegment.Peer seg = lane.transport.peerSegment(key);
        if (seg == null ? ShmMemory.namesSegment(key) : !seg.open()) {
            return seg;
        }
        forgetClosed(lane); // a new key: the closed ones of keys no longer used go now
        if (lane.segments.size() > 4096) {
            lane.segments.clear(); // a bounded cache: keys are usually few and long-lived
        }
        lane.segments.put(key, seg);
        return seg;
    }
}
