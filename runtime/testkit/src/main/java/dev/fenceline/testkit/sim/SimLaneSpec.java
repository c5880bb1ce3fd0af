package dev.fenceline.testkit.sim;

import dev.fenceline.LaneType;
import java.time.Duration;
import java.util.Set;

/**
 * One configured sim lane.
 *
 * @param types what the lane carries
 * @param minDelay shortest delivery delay
 * @param maxDelay longest delivery delay
 */
public record SimLaneSpec(Set<LaneType> types, Duration minDelay, Duration maxDelay) {
    /** Copies the types. */
    public SimLaneSpec {
        types = Set.copyOf(types);
    }
}
