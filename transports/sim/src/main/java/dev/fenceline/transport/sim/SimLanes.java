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
    /** The last {@value #RETIRED} lanes closed. Guarded by {@link #LANES}, whose lanes move here. */
    private static final Map<Long, SimLane> CLOSED = new java.util.LinkedHashMap<>() {
        private static final long serialVersionUID = 1L;

        @Override
        protected boolean removeEldestEntry(Map.Entry<Long, SimLane> eldest) {
            return size() > RETIRED;
        }
    };

    private SimLanes() {
    }

    static void register(SimLane lane) {
        synchronized (LANES) {
            LANES.put(lane.id(), lane);
        }
    }

    /**
     * Moves a lane from the open ones to the recently closed ones (the last {@value #RETIRED}), both
     * under the open ones' lock: a lookup that no longer finds it open finds it closed. (Moved in two
     * steps, a recovery between them found the lane in neither: "no sim lane with connection id
     * ...".)
     */
    static void forget(SimLane lane) {
        synchronized (LANES) {
            if (LANES.get(lane.id()) == lane) {
                CLOSED.put(lane.id(), lane);
                LANES.remove(lane.id());
            }
        }
    }

    /**
     * @param connectionId a lane's connection
     * @return the lane, open or among the last {@value #RETIRED} closed, or null: one lookup, in which
     *     a lane being closed is found open or closed
     */
    static SimLane findOpenOrClosed(long connectionId) {
        synchronized (LANES) {
            SimLane open = LANES.get(connectionId);
            return open != null ? open : CLOSED.get(connectionId);
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
}
