package dev.fenceline.internal;

import dev.fenceline.LaneInfo;
import dev.fenceline.LaneType;
import dev.fenceline.spi.LaneConnection;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Set;

/**
 * An endpoint's lanes, immutable: for each slot its connection (null when empty), types and
 * liveness, plus the lane generation, which changes iff the connection in some slot changes.
 */
public final class LaneTable {
    private final LaneConnection[] connections;
    private final boolean[] live;
    private final long generation;

    private LaneTable(LaneConnection[] connections, boolean[] live, long generation) {
        this.connections = connections;
        this.live = live;
        this.generation = generation;
    }

    /**
     * @param connections the initial lanes, all live
     * @return the table, generation 0
     */
    public static LaneTable of(List<LaneConnection> connections) {
        if (connections.size() > 64) {
            throw new IllegalArgumentException(connections.size() + " lanes exceed the limit of 64");
        }
        boolean[] live = new boolean[connections.size()];
        Arrays.fill(live, true);
        return new LaneTable(connections.toArray(new LaneConnection[0]), live, 0);
    }

    /** @return the number of slots */
    public int size() {
        return connections.length;
    }

    /** @return the lane generation */
    public long generation() {
        return generation;
    }

    /**
     * @param index a slot
     * @return its connection, or null
     */
    public LaneConnection connection(int index) {
        return connections[index];
    }

    /**
     * @param index a slot
     * @return whether it holds a live connection
     */
    public boolean isLive(int index) {
        return index >= 0 && index < connections.length && live[index] && connections[index] != null;
    }

    /** @return the live lanes as a bit mask */
    public long liveMask() {
        long m = 0;
        for (int i = 0; i < connections.length; i++) {
            if (isLive(i)) {
                m |= 1L << i;
            }
        }
        return m;
    }

    /**
     * @param index a slot
     * @param type a lane type
     * @return whether the slot's connection carries that type
     */
    public boolean hasType(int index, LaneType type) {
        return connections[index] != null && connections[index].types().contains(type);
    }

    /**
     * Marks a lane failed. The connection stays in the slot (so late completions can be matched)
     * but is no longer live; the generation does not change, no connection did.
     *
     * @param index the slot
     * @return the new table
     */
    public LaneTable withFailed(int index) {
        boolean[] l = live.clone();
        l[index] = false;
        return new LaneTable(connections, l, generation);
    }

    /** @return one {@link LaneInfo} per slot */
    public List<LaneInfo> describe() {
        List<LaneInfo> out = new ArrayList<>(connections.length);
        for (int i = 0; i < connections.length; i++) {
            LaneConnection c = connections[i];
            out.add(new LaneInfo(i, generation, c == null ? Set.of() : c.types(), c == null ? "-" : c.transport(),
                    isLive(i)));
        }
        return List.copyOf(out);
    }
}
