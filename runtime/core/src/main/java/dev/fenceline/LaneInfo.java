package dev.fenceline;

import java.util.Collections;
import java.util.EnumSet;
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
        EnumSet<LaneType> copy = EnumSet.noneOf(LaneType.class);
        copy.addAll(types);
        types = Collections.unmodifiableSet(copy);
    }
}
