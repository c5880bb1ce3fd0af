package dev.fenceline.transport.sim;

import dev.fenceline.LaneType;
import java.time.Duration;
import java.util.Set;

/**
 * One configured sim lane.
 *
 * @param types what the lane carries
 * @param minDelay shortest delivery delay
 * @param maxDelay longest delivery delay
 * @param deduplicates whether the target applies a re-sent operation at most once (a software
 *     protocol); false models a one-sided hardware lane
 * @param revocable whether the origin can withdraw copies a stalled target has not applied yet (as
 *     shm can, in the shared segment); false models copies in a socket buffer, applied whenever the
 *     target resumes
 */
public record SimLaneSpec(Set<LaneType> types, Duration minDelay, Duration maxDelay, boolean deduplicates,
        boolean revocable) {
    /**
     * Copies the types.
     *
     * @param types what the lane carries
     * @param minDelay the shortest delivery delay
     * @param maxDelay the longest delivery delay
     * @param deduplicates whether the target applies a re-sent operation at most once
     * @param revocable whether the origin can withdraw copies a stalled target has not applied
     */
    public SimLaneSpec {
        types = Set.copyOf(types);
    }
}
