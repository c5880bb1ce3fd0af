package dev.fenceline.transport.ucx;

import dev.fenceline.EndpointFailedException;
import dev.fenceline.FencelineException;
import dev.fenceline.OutcomeUnknownException;
import dev.fenceline.spi.DirectAnswers;
import java.util.ArrayDeque;

/**
 * The active messages calling threads sent on one lane ({@link UcxLane#activeMessageNow}), in the
 * order the endpoint's ledger numbered them, and that ledger, to which their answers go without the
 * endpoint actor. The queue is guarded by the lane's lock; the ledger is told outside it.
 */
final class UcxDirectMessages {
    /** Unanswered, oldest first. */
    private final ArrayDeque<UcxOp> queue = new ArrayDeque<>();
    /** Of those, the ones whose answer the target may hold back ({@link UcxOp#answerMayWait}). */
    private int mayWait;
    /** The endpoint's ledger (one endpoint per lane: always the same). */
    private volatile DirectAnswers answers;

    /** @param a the endpoint's ledger, kept from the first message on */
    void ledger(DirectAnswers a) {
        if (answers == null) {
            answers = a;
        }
    }

    /** @param op a message just numbered (under the lane's lock) */
    void add(UcxOp op) {
        queue.add(op);
        if (op.answerMayWait) {
            mayWait++;
        }
    }

    /** @return whether the target may hold back the answer to one of them (under the lane's lock) */
    boolean anyMayWait() {
        return mayWait > 0;
    }

    /** The last one added could not be queued after all (under the lane's lock). */
    void removeLast() {
        if (queue.removeLast().answerMayWait) {
            mayWait--;
        }
    }

    /**
     * @param token an answered message's token (under the lane's lock)
     * @return whether it was the oldest, now taken; else the answer is not this lane's to report
     */
    boolean answered(long token) {
        UcxOp head = queue.peekFirst();
        if (head == null || head.token != token) {
            return false;
        }
        if (queue.pollFirst().answerMayWait) {
            mayWait--;
        }
        return true;
    }

    /** Tells the ledger (outside the lane's lock). */
    void report(long token, FencelineException error) {
        answers.answered(token & ~UcxLane.DIRECT, error);
    }

    /**
     * The lane was given up (under its lock): those the agent sent may have run their handlers, the
     * others are withdrawn and never leave.
     *
     * @return how many were sent (high half) and withdrawn (low half)
     */
    long revoke() {
        int sent = 0;
        int withdrawn = 0;
        for (UcxOp d : queue) {
            if (d.state == UcxOp.State.SENT) {
                sent++;
            } else {
                d.state = UcxOp.State.WITHDRAWN; // the agent skips it
                withdrawn++;
            }
        }
        queue.clear();
        mayWait = 0;
        return (long) sent << 32 | withdrawn;
    }

    /**
     * Reports what {@link #revoke} found (outside the lane's lock); the sent ones are the older (the
     * agent sends in order), so the next flush reports them first.
     *
     * @param counts what it returned
     * @param lane the lane, for the message
     * @param dead whether the peer is gone
     */
    void reportRevoked(long counts, UcxLane lane, boolean dead) {
        int sent = (int) (counts >>> 32);
        int withdrawn = (int) counts;
        if (sent > 0) {
            answers.abandoned(sent, new OutcomeUnknownException("ucx: " + sent + " active message(s) sent directly"
                    + " on " + lane + " had no answer when the lane was given up" + (dead ? " (the peer is gone)" : "")
                    + ": each may or may not have run its handler"));
        }
        if (withdrawn > 0) {
            answers.abandoned(withdrawn, new EndpointFailedException("ucx: " + withdrawn + " active message(s) sent"
                    + " directly on " + lane + " were withdrawn before they left: not run"));
        }
    }
}
