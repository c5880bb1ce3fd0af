package dev.fenceline.transport.ucx;

import dev.fenceline.FencelineException;
import dev.fenceline.spi.DirectAnswers;
import dev.fenceline.spi.PostedOperation;
import dev.fenceline.spi.Revocation;
import java.util.function.LongConsumer;
import org.agrona.collections.Long2ObjectHashMap;
import org.agrona.collections.LongHashSet;

/**
 * What a {@link UcxLane} remembers of its operations: those posted and not answered (the endpoint
 * actor's by its tokens, and the calling threads' posted ones and direct active messages in the
 * order they were numbered), whether the endpoint ended or revoked the lane, which answers it still
 * waits for after that, and which operations were never sent. Pure bookkeeping: the lane counts its
 * flow control and calls out to the agent, its listener and the endpoint's ledgers; the ledger only
 * says what the record implies, which keeps the revocation's logic testable without UCX.
 *
 * <p>The ledger is the lane's lock, and takes no lock of its own: call every method while holding
 * its monitor ({@code synchronized (ledger)}), except the direct messages' reports
 * ({@link #answersTo}, {@link #reportDirect}, {@link #reportRevoked}), which tell the endpoint's
 * ledger outside it. An operation's {@link UcxOp#state} changes under the same monitor (the agent
 * sends under it), so the revocation knows exactly which operations the agent handed to UCT.
 *
 * <p>The ledger keeps no lane: the operations it makes name the one the caller passes.
 */
final class UcxLaneLedger {
    /** Data operations posted and not answered, by token (the posted ones by the lane's tokens). */
    private final Long2ObjectHashMap<UcxOp> ops = new Long2ObjectHashMap<>();
    /** The endpoint took the lane away (close or abort); nothing more is sent. */
    private boolean ended;
    /** The endpoint asked what became of the lane's operations. */
    private boolean revoked;
    /** Operations whose answers the endpoint still waits for after the revocation. */
    private final LongHashSet held = new LongHashSet();
    /** Operations posted after the lane died, never sent. */
    private final LongHashSet neverSent = new LongHashSet();
    /** Active messages sent on the fast path and not answered, and the endpoint's ledger for them. */
    private final UcxDirectMessages directs = new UcxDirectMessages();
    /** Operations calling threads posted and not answered, and those given back. */
    private final UcxPostedQueue posted = new UcxPostedQueue();

    /**
     * What the revocation found became of the lane's operations. As a {@link Revocation}: each
     * endpoint token's fate (one in no set is held, or answered already: its answer is on its way).
     *
     * @param withdrawn tokens the agent never sent, and never will
     * @param stopped tokens that may have been applied and will not be from now on
     * @param mayApply tokens sent as software requests a live peer may still apply
     * @param directCounts the direct active messages sent (high half) and withdrawn (low half)
     */
    record Fates(LongHashSet withdrawn, LongHashSet stopped, LongHashSet mayApply, long directCounts)
            implements Revocation {
        @Override
        public Fate fate(long token) {
            return withdrawn.contains(token) ? Fate.REVOKED
                    : stopped.contains(token) ? Fate.STOPPED
                    : mayApply.contains(token) ? Fate.MAY_STILL_APPLY
                    : Fate.ANSWER_FOLLOWS; // held, or answered already (its answer is on its way)
        }

        /** @return the direct active messages the agent had sent: each may have run its handler */
        int directSent() {
            return (int) (directCounts >>> 32);
        }

        /** @return the direct active messages withdrawn before they left */
        int directWithdrawn() {
            return (int) directCounts;
        }
    }

    // ------------------------------------------------------------------ the endpoint actor's operations

    /** An operation posted after the lane died: lost with it, its failure report on the way. */
    void neverSent(long token) {
        neverSent.add(token);
    }

    /**
     * Remembers an operation the endpoint actor posted, before the agent may take it.
     *
     * @return false if the lane ended meanwhile: then it is never sent (and the revocation says so)
     */
    boolean register(UcxOp u) {
        if (ended) {
            neverSent.add(u.token);
            return false;
        }
        ops.put(u.token, u);
        return true;
    }

    /** The agent would not take an operation {@link #register}ed: the endpoint gets NO_RESOURCE. */
    void forget(long token) {
        ops.remove(token);
    }

    /** @return whether the endpoint gave the lane up (ended or revoked it): calling threads number nothing more */
    boolean ended() {
        return ended || revoked;
    }

    /** The endpoint gave the lane up (close or abort): the agent sends nothing more of it. */
    void end() {
        ended = true;
    }

    // ------------------------------------------------------------------ direct active messages

    /**
     * Keeps the endpoint's ledger for direct messages (without the monitor: the reference is volatile).
     *
     * @param a the endpoint's ledger, kept from the first message on
     */
    void answersTo(DirectAnswers a) {
        directs.ledger(a);
    }

    /** @param op a direct message just numbered, queued for the agent in that order */
    void directQueued(UcxOp op) {
        directs.add(op);
    }

    /**
     * @return whether the target may hold back the answer to an unanswered direct message or posted
     *     operation
     */
    boolean directAnswersMayWait() {
        return directs.anyMayWait() || posted.anyMayWait();
    }

    /** The direct message just {@link #directQueued} could not be queued after all (the agent closed). */
    void directNotQueued() {
        directs.removeLast();
    }

    /**
     * @param token an answered direct message's token
     * @return whether it was the oldest unanswered one, now taken: the lane reports it (else the
     *     revocation reported it already)
     */
    boolean directAnswered(long token) {
        return directs.answered(token);
    }

    /** Tells the endpoint's ledger of a direct message's answer (without the monitor). */
    void reportDirect(long token, FencelineException error) {
        directs.report(token, error);
    }

    /**
     * Tells the endpoint's ledger what the revocation found of the direct messages (without the
     * monitor).
     *
     * @param f what {@link #revoke} returned
     * @param lane the lane, for the message
     * @param dead whether the peer is gone
     */
    void reportRevoked(Fates f, UcxLane lane, boolean dead) {
        directs.reportRevoked(f.directCounts(), lane, dead);
    }

    // ------------------------------------------------------------------ posted by calling threads

    /**
     * Numbers an operation a calling thread posted, in the order the agent sends it (the caller
     * then counts it and {@link #track}s it).
     *
     * @param lane the lane it goes on
     * @param p the operation
     * @param sn the number the endpoint gave it
     * @param answerMayWait whether the target may hold its answer back
     * @return its copy, under a token of the lane's own
     */
    UcxOp numberPosted(UcxLane lane, PostedOperation p, long sn, boolean answerMayWait) {
        return posted.add(lane, p, sn, answerMayWait);
    }

    /** Remembers a posted operation until its answer comes, or it is given back. */
    void track(UcxOp u) {
        ops.put(u.token, u);
    }

    /**
     * Gives every unanswered posted operation back to its endpoint, oldest first
     * ({@link PostedOperation#returned}, under the monitor: before the lane's end is reported); an
     * answer that comes later goes nowhere.
     *
     * @param forgotten run for each, after its token is forgotten and before it is given back (the
     *     lane's flow control gets its place back)
     */
    void returnPosted(Runnable forgotten) {
        posted.returnAll(u -> {
            ops.remove(u.token);
            forgotten.run();
        });
    }

    // ------------------------------------------------------------------ progress agent

    /**
     * Takes an operation to hand it to UCT: only one the endpoint has not given up. One it did is
     * withdrawn here, so the revocation that follows says REVOKED.
     *
     * @return whether the agent may send it
     */
    boolean sendable(UcxOp op) {
        if (op.state != UcxOp.State.QUEUED) {
            return false;
        }
        if (ended) {
            op.state = UcxOp.State.WITHDRAWN; // the revocation that follows says REVOKED
            return false;
        }
        return true;
    }

    /**
     * A reply the target sent names an operation by its token, and the target knows the tokens: only
     * a software request it was sent may be answered by one. A reply to an operation still queued, or
     * in UCT's hardware path (whose buffer the device or kernel may still be writing), is a lie.
     *
     * @param token the token a reply names
     * @return false if that operation is known and waits for no reply
     */
    boolean awaitsReply(long token) {
        UcxOp op = ops.get(token);
        return op == null || op.state == UcxOp.State.SENT; // unknown: revoked or answered already
    }

    /**
     * @param token the token a reply names
     * @return whether the ledger holds that operation (while the lane lives, a reply names one it holds)
     */
    boolean holds(long token) {
        return ops.containsKey(token);
    }

    /**
     * An operation is answered: it is forgotten, and the endpoint (or the calling thread that
     * posted it) still wants the answer unless the revocation decided it was not owed.
     *
     * @param token the operation
     * @param forgotten run once the operation is forgotten (the lane's flow control gets its place back)
     * @return the operation if its answer is to be delivered, else null
     */
    UcxOp answered(long token, Runnable forgotten) {
        UcxOp op = ops.remove(token);
        if (op == null) {
            return null; // given up and revoked as not owed, or a posted one given back
        }
        forgotten.run();
        if (op.posted != null) { // answers come in order: the oldest posted one
            posted.answered(op);
            return op;
        }
        if (revoked && !held.remove(token)) {
            return null;
        }
        return op;
    }

    /** @return whether answers are still owed to the endpoint (held ones) */
    boolean owesAnswers() {
        return !held.isEmpty();
    }

    /**
     * The agent closed: after the revocation the held answers will not come. Each is forgotten and
     * passed on (in the set's order), so the endpoint fails it as unknown.
     *
     * @param each called for each held token, under the monitor
     */
    void abandonHeld(LongConsumer each) {
        if (revoked && !held.isEmpty()) {
            for (LongHashSet.LongIterator it = held.iterator(); it.hasNext();) {
                long token = it.nextValue();
                ops.remove(token);
                each.accept(token);
            }
            held.clear();
        }
    }

    // ------------------------------------------------------------------ the revocation

    /**
     * The endpoint revokes the lane: it ends, and each unanswered operation's fate follows from
     * where it stands. One the agent had not taken is withdrawn (the agent skips it); a software
     * request already sent may still be applied by a live peer (its target's window recognizes a
     * copy sent again) and will not be by a dead one. One handed to the hardware is held: UCT
     * completes it, even on a failed channel, whose endpoint the agent keeps until then (a copy
     * under way may still land, so its completion, not the failure, says what became of it); but
     * one whose peer's process is gone (not only its worker) applies nothing more, and once the agent closed no
     * completion comes, so such an operation may still apply.
     *
     * @param dead whether the peer process is gone (read under the monitor)
     * @param failed whether the lane's channel failed with the peer's process gone (read under the
     *     monitor): what the hardware had then stops
     * @param closed whether the agent closed (read under the monitor: it is set before the agent's
     *     held-answer sweep takes the monitor, so one of the two sees the other)
     * @return the fates, and the direct messages' counts for {@link #reportRevoked}
     */
    Fates revoke(boolean dead, boolean failed, boolean closed) {
        LongHashSet withdrawn = new LongHashSet();
        LongHashSet stopped = new LongHashSet();
        LongHashSet mayApply = new LongHashSet();
        revoked = true;
        ended = true;
        long direct = directs.revoke();
        for (Long2ObjectHashMap<UcxOp>.ValueIterator it = ops.values().iterator(); it.hasNext();) {
            UcxOp o = it.next();
            switch (o.state) {
                case QUEUED, WITHDRAWN -> {
                    o.state = UcxOp.State.WITHDRAWN; // the agent skips it
                    withdrawn.add(o.token);
                    it.remove();
                }
                case SENT -> {
                    (dead ? stopped : mayApply).add(o.token);
                    it.remove(); // its answer, if one comes, goes nowhere
                }
                case POSTED -> {
                    if (failed && dead) {
                        stopped.add(o.token);
                        it.remove();
                    } else if (closed) {
                        mayApply.add(o.token);
                        it.remove();
                    } else {
                        held.add(o.token); // UCT completes it, and the endpoint waits for that
                    }
                }
            }
        }
        withdrawn.addAll(neverSent);
        // Posted operations were given back already; the endpoint asks after them by its own tokens.
        posted.fates(withdrawn, dead ? stopped : mayApply);
        return new Fates(withdrawn, stopped, mayApply, direct);
    }
}
