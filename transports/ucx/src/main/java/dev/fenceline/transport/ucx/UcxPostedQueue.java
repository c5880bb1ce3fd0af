package dev.fenceline.transport.ucx;

import dev.fenceline.spi.PostedOperation;
import dev.fenceline.spi.TransportOp;
import java.util.ArrayDeque;
import java.util.function.Consumer;
import org.agrona.collections.LongHashSet;

/**
 * The operations calling threads posted on one lane ({@link UcxLane#postNow}), in the order they
 * were numbered: the tokens the lane gives them, the low-water mark they carry, and, once the lane
 * gave them back, which had been sent, for the lane's revocation. Guarded by the lane's lock.
 */
final class UcxPostedQueue {
    /** Unanswered, oldest first (answers come in this order). */
    private final ArrayDeque<UcxOp> queue = new ArrayDeque<>();
    /** Of those, the ones whose answer the target may hold back ({@link UcxOp#answerMayWait}). */
    private int mayWait;
    private long tokens;
    /** The lowest number among the unanswered ones. */
    private long low;
    /** The endpoint's tokens of those given back that the agent had sent, and of those it had not; null until the first. */
    private LongHashSet sent;
    private LongHashSet unsent;

    /**
     * Identifies a posted operation under its number and queues it.
     *
     * @param lane the lane
     * @param p the operation
     * @param sn the number the endpoint gave it
     * @param answerMayWait whether the target may hold its answer back
     * @return its copy, for the agent
     */
    UcxOp add(UcxLane lane, PostedOperation p, long sn, boolean answerMayWait) {
        if (queue.isEmpty()) {
            low = sn;
        }
        // Below the oldest unanswered posted number the target may forget: all answered.
        TransportOp op = p.op();
        op.identify(op.originId(), sn, low);
        UcxOp u = UcxOp.posted(lane, UcxLane.POSTED | tokens++, p);
        u.answerMayWait = answerMayWait;
        queue.add(u);
        if (answerMayWait) {
            mayWait++;
        }
        return u;
    }

    /** @return whether the target may hold back the answer to one of them */
    boolean anyMayWait() {
        return mayWait > 0;
    }

    /** @param op the oldest one, answered (its completion is the caller's) */
    void answered(UcxOp op) {
        if (queue.remove(op) && op.answerMayWait) {
            mayWait--;
        }
        low = op.sequence + 1;
    }

    /**
     * Gives every one back to its endpoint, oldest first, and remembers which had been sent.
     *
     * @param forget what the lane does with each first (it forgets the token)
     */
    void returnAll(Consumer<UcxOp> forget) {
        mayWait = 0;
        UcxOp u;
        while ((u = queue.pollFirst()) != null) {
            forget.accept(u);
            long token = u.posted.op().token();
            if (u.state == UcxOp.State.SENT) {
                (sent == null ? sent = new LongHashSet() : sent).add(token);
            } else {
                u.state = UcxOp.State.WITHDRAWN; // the agent skips it
                (unsent == null ? unsent = new LongHashSet() : unsent).add(token);
            }
            u.posted.returned();
        }
    }

    /**
     * The revocation's part: those given back that never left are revoked; those sent may still
     * apply (the shared window recognizes a copy sent again), or, the peer gone, are stopped.
     *
     * @param withdrawn where the unsent ones go
     * @param sentTo where the sent ones go
     */
    void fates(LongHashSet withdrawn, LongHashSet sentTo) {
        if (unsent != null) {
            withdrawn.addAll(unsent);
        }
        if (sent != null) {
            sentTo.addAll(sent);
        }
    }
}
