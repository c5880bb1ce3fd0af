package dev.fenceline.transport.sim;

import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Every open sim lane in this JVM by connection id, for fault injection, and the most recently
 * closed ones (bounded), so that a failed lane can still be recovered.
 */
final class SimLanes {
    private static final int RETIRED = 4096;
    private static final Map<Long, SimLane> LANES = new ConcurrentHashMap<>();
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
        LANES.put(lane.id(), lane);
    }

    static void forget(SimLane lane) {
        if (LANES.remove(lane.id(), lane)) {
            CLOSED.put(lane.id(), lane);
        }
    }

    static SimLane find(long connectionId) {
        return LANES.get(connectionId);
    }

    static SimLane findClosed(long connectionId) {
        return CLOSED.get(connectionId);
    }
}
