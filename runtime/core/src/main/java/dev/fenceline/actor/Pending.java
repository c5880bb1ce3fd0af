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

    /**
     * @param token a lane flush the lane has not taken yet
     * @param probe whether it is a keepalive probe (which must reach the peer, not just the lane)
     */
    record Flush(long token, boolean probe) implements Pending {
    }
}
