package dev.fenceline.transport.shm;

import java.util.Collection;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/**
 * A worker's ring lanes by connection id: added and removed by the transport actor and by closing
 * endpoints, looked up by the polling thread for every answer a peer writes. Answers come in runs
 * to one lane, so the polling thread asks the last lane it found first: no boxed id and no map
 * lookup per answer. A lane is marked unlisted before it leaves the map, so that shortcut never
 * finds a lane the map would not (a lookup racing the removal may find it either way, as with the
 * map alone).
 */
final class ShmLaneTable {
    private final Map<Long, ShmLane> lanes = new ConcurrentHashMap<>();
    /** The polling thread's last lane found ({@link #find}). */
    private ShmLane lastFound;

    /** Any thread: a new lane (its id drawn at random: one already listed is refused, never replaced). */
    void add(ShmLane lane) {
        if (lanes.putIfAbsent(lane.conn, lane) != null) {
            throw new IllegalStateException("shm: connection id " + Long.toHexString(lane.conn) + " is taken");
        }
    }

    /** Any thread: the lane leaves the table (unlisted first, for {@link #find}). */
    void remove(ShmLane lane) {
        lane.unlisted = true;
        lanes.remove(lane.conn, lane);
    }

    /**
     * Polling thread only.
     *
     * @param conn a connection id, as a peer wrote it
     * @return its lane, or null if none is listed
     */
    ShmLane find(long conn) {
        ShmLane l = lastFound;
        if (l == null || l.conn != conn || l.unlisted) {
            l = lanes.get(conn);
            lastFound = l;
        }
        return l;
    }

    /** @return a live, unmodifiable view of the listed lanes */
    Collection<ShmLane> all() {
        return java.util.Collections.unmodifiableCollection(lanes.values());
    }
}
