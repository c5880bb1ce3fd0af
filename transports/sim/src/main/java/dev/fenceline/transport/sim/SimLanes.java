package dev.fenceline.transport.sim;

import java.util.Map;
import org.agrona.collections.Long2ObjectHashMap;

/**
 * Every open sim lane in this JVM by connection id, for fault injection, and the most recently
 * closed ones (bounded), so that a failed lane can still be recovered.
 */
final class SimLanes {
    private static final int RETIRED = 4096;
    /**
     * Guarded by itself. Long keys without boxing: a simulated worker may hold tens of thousands of
     * lanes, and a concurrent map's node and boxed key cost 56 B each; lookups are fault injection's.
     */
    private static final Long2ObjectHashMap<SimLane> LANES = new Long2ObjectHashMap<>();
    private static final Map<Long, SimLane> CLOSED = java.util.Collections.synchronizedMap(
            new java.util.LinkedHashMap<Long, SimLane>() {
                private static final long serialVersionUID = 1L;

                @Override
                protected boolean removeEldestEntry(Map.Entry<Long, SimLane> eldest) {
                    return size() > RETIRED;
                }
            });

    private SimLanes() {
    }

    static void register(SimLane lane) {
        synchronized (LANES) {
            LANES.put(lane.id(), lane);
        }
    }

    static void forget(SimLane lane) {
        boolean removed;
        synchronized (LANES) {
            removed = LANES.get(lane.id()) == lane && LANES.remove(lane.id()) != null;
        }
        if (removed) {
            CLOSED.put(lane.id(), lane);
        }
    }

    /** @return the open lanes whose target is {@code peer} */
    static java.util.List<SimLane> to(SimTransport peer) {
        java.util.List<SimLane> found = new java.util.ArrayList<>();
        synchronized (LANES) {
            for (SimLane l : LANES.values()) {
                if (l.peer() == peer) {
                    found.add(l);
                }
            }
        }
        return found;
    }

    static SimLane find(long connectionId) {
        synchronized (LANES) {
            return LANES.get(connectionId);
        }
    }

    static SimLane findClosed(long connectionId) {
        return CLOSED.get(connectionId);
    }
}
