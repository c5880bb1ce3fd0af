package dev.fenceline.actor;

import dev.fenceline.spi.TransportOp;

/**
 * What waits on a lane that answered {@link dev.fenceline.spi.PostStatus#NO_RESOURCE}: an operation
 * or a lane flush, in post order, until the lane has room again.
 */
sealed interface Pending {
    /** @param op an operation the lane has not taken yet */
    record Op(TransportOp op) implements Pending {
    }

    /** @param token a lane flush (or keepalive probe) the lane has not taken yet */
    record Flush(long token) implements Pending {
    }
}
