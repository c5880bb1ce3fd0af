package dev.fenceline;

import java.util.ArrayList;
import java.util.Collections;
import java.util.EnumSet;
import java.util.List;
import java.util.Set;

/**
 * A snapshot of one lane of an endpoint.
 *
 * @param index the slot in the endpoint's lane table (not an identity: the connection behind a
 *     slot can be replaced)
 * @param generation the endpoint's lane generation when this snapshot was taken; it changes
 *     whenever the transport connection behind any slot changes
 * @param types what the lane is used for
 * @param transport the name of the transport that provides the connection
 * @param live whether the lane is usable (not failed)
 * @param connectionId the identity of the transport connection in the slot (0 when empty)
 */
public record LaneInfo(int index, long generation, Set<LaneType> types, String transport, boolean live,
        long connectionId) {
    /**
     * Copies {@code types}, so the snapshot stays immutable (and lists them in declaration order).
     *
     * @param index the slot
     * @param generation the lane generation
     * @param types what the lane is used for
     * @param transport the transport's name
     * @param live whether the lane is usable
     * @param connectionId the connection's identity, or 0
     */
    public LaneInfo {
        int bits = 0;
        for (LaneType t : types) {
            bits |= 1 << t.ordinal();
        }
        types = TYPE_SETS.get(bits); // shared: a worker holds a snapshot for every lane of every endpoint
    }

    /** Every combination of lane types, immutable, by the bits of their ordinals. */
    private static final List<Set<LaneType>> TYPE_SETS = typeSets();

    private static List<Set<LaneType>> typeSets() {
        LaneType[] all = LaneType.values();
        List<Set<LaneType>> sets = new ArrayList<>(1 << all.length);
        for (int bits = 0; bits < 1 << all.length; bits++) {
            EnumSet<LaneType> s = EnumSet.noneOf(LaneType.class);
            for (LaneType t : all) {
                if ((bits & 1 << t.ordinal()) != 0) {
                    s.add(t);
                }
            }
            sets.add(Collections.unmodifiableSet(s));
        }
        return List.copyOf(sets);
    }
}
