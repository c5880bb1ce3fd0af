package dev.fenceline.internal;

import dev.fenceline.LaneInfo;
import dev.fenceline.LaneType;
import dev.fenceline.spi.LaneConnection;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Set;

/**
 * An endpoint's lanes, immutable: for each slot its connection (null when the lane failed or is
 * empty) and the lane generation, which changes iff the connection in some slot changes
 * (null to x, x to null, x to y). An index is a slot, not an identity. Each lane has a tier, its
 * transport's position in {@code fenceline.transports}: lanes of a later tier carry an operation only
 * while no live lane of an earlier one can.
 */
public final class LaneTable {
    /** The most lanes an endpoint can have (lanes are bits of a {@code long}). */
    public static final int MAX_LANES = 64;

    private final LaneConnection[] connections;
    private final long generation;
    /** The transports in order of preference; empty: every lane is of tier 0. */
    private final List<String> order;

    private LaneTable(LaneConnection[] connections, long generation, List<String> order) {
        this.connections = connections;
        this.generation = generation;
        this.order = order;
    }

    /**
     * @param connections the initial lanes, all of one tier
     * @return the table, generation 0
     */
    public static LaneTable of(List<LaneConnection> connections) {
        return of(connections, List.of());
    }

    /**
     * @param connections the initial lanes
     * @param transportOrder the transports in order of preference, which gives each lane its tier
     * @return the table, generation 0
     */
    public static LaneTable of(List<LaneConnection> connections, List<String> transportOrder) {
        if (connections.size() > MAX_LANES) {
            throw new IllegalArgumentException(connections.size() + " lanes exceed the limit of " + MAX_LANES);
        }
        return new LaneTable(connections.toArray(new LaneConnection[0]), 0, List.copyOf(transportOrder));
    }

    /**
     * @param index a live slot
     * @return its tier: its transport's position in the order of preference (0 is the most
     *     preferred; a transport not in the order comes after all that are)
     */
    public int tier(int index) {
        if (order.isEmpty()) {
            return 0;
        }
        int t = order.indexOf(connections[index].transport());
        return t < 0 ? order.size() : t;
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
        return index >= 0 && index < connections.length ? connections[index] : null;
    }

    /**
     * @param index a slot
     * @return whether it holds a live connection
     */
    public boolean isLive(int index) {
        return connection(index) != null;
    }

    /** @return the live lanes that keepalive probes (those whose transport does not watch their peer) */
    public long probedMask() {
        long m = 0;
        for (int i = 0; i < connections.length; i++) {
            if (connections[i] != null && !connections[i].watchesLiveness()) {
                m |= 1L << i;
            }
        }
        return m;
    }

    /** @return the live lanes as a bit mask */
    public long liveMask() {
        long m = 0;
        for (int i = 0; i < connections.length; i++) {
            if (connections[i] != null) {
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
     * Puts {@code connection} (or null) in a slot. The generation changes iff the slot's
     * connection actually changes.
     *
     * @param index the slot
     * @param connection the new connection, or null (the lane failed)
     * @return the new table, or this one if nothing changed
     */
    public LaneTable withSlot(int index, LaneConnection connection) {
        if (connections[index] == connection) {
            return this;
        }
        LaneConnection[] c = connections.clone();
        c[index] = connection;
        return new LaneTable(c, generation + 1, order);
    }

    /**
     * @param index the slot of a failed lane
     * @return the table with that slot empty
     */
    public LaneTable withFailed(int index) {
        return withSlot(index, null);
    }

    /**
     * @param connection a new lane
     * @return the table with one more slot, holding it
     */
    public LaneTable withAdded(LaneConnection connection) {
        if (connections.length >= MAX_LANES) {
            throw new IllegalStateException("an endpoint has at most " + MAX_LANES + " lanes");
        }
        LaneConnection[] c = Arrays.copyOf(connections, connections.length + 1);
        c[connections.length] = connection;
        return new LaneTable(c, generation + 1, order);
    }

    /** @return one {@link LaneInfo} per slot */
    public List<LaneInfo> describe() {
        List<LaneInfo> out = new ArrayList<>(connections.length);
        for (int i = 0; i < connections.length; i++) {
            LaneConnection c = connections[i];
            out.add(new LaneInfo(i, generation, c == null ? Set.of() : c.types(), c == null ? "-" : c.transport(),
                    c != null, c == null ? 0 : c.id()));
        }
        return List.copyOf(out);
    }

    /**
     * @param lanes a set of slots as a bit mask
     * @return it as text, for messages: {@code {0,2}}
     */
    public static String describeMask(long lanes) {
        StringBuilder sb = new StringBuilder("{");
        for (int i = 0; i < MAX_LANES; i++) {
            if ((lanes & (1L << i)) != 0) {
                sb.append(sb.length() > 1 ? "," : "").append(i);
            }
        }
        return sb.append('}').toString();
    }
}
