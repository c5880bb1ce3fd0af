package dev.fenceline.transport.ucx;

import dev.fenceline.FencelineException;
import dev.fenceline.spi.DirectAnswers;
import dev.fenceline.spi.PostStatus;
import dev.fenceline.spi.PostedOperation;
import dev.fenceline.spi.TransportOp;
import java.nio.ByteBuffer;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * How operations enter one lane for its progress agent, within the lane's flow control: the endpoint
 * actor's posts, flushes and keepalive probes, and what calling threads queue under the endpoint's
 * grant without the actor (active messages, and small puts, gets and atomics, each numbered and
 * queued in one step under the lane's lock, {@link UcxLane#ledger}), with the latter's answers.
 */
final class UcxLanePosting {
    /** The largest put or get a calling thread posts; larger ones are the actor's to send. */
    static final int POSTED_MAX = 1024;

    private final UcxLane lane;
    /** The lane's ledger, and its lock. */
    private final UcxLaneLedger ledger;
    private final UcxAgent agent;
    /** The lane's data operations queued or unanswered. */
    private final AtomicInteger unanswered;
    /** What the lane's ledger does for each operation it gives back. */
    private final Runnable freed;
    private final int queueDepth;
    /** Whether the lane's peer is on this host with a key table mapped here, whose heartbeat answers keepalive. */
    private final boolean onThisHost;
    /** Whether calling threads post here: software requests only, which the target's windows recognize. */
    final boolean postsDirectly;
    /** Endpoint actor: a weak fence waits for the next operation it posts ({@link UcxOp#fencedBefore}). */
    private boolean fenceNext;

    UcxLanePosting(UcxLane lane, UcxAgent agent, AtomicInteger unanswered, Runnable freed, int queueDepth,
            boolean postsDirectly) {
        this.lane = lane;
        this.ledger = lane.ledger;
        this.agent = agent;
        this.unanswered = unanswered;
        this.freed = freed;
        this.queueDepth = queueDepth;
        this.onThisHost = lane.channel.peer.table != null; // the agent maps it before it makes the peer's lanes
        this.postsDirectly = postsDirectly;
    }

    // ------------------------------------------------------------------ endpoint actor

    PostStatus post(TransportOp op) {
        if (!lane.isLive()) {
            synchronized (ledger) {
                ledger.neverSent(op.token()); // lost with the lane: its failure report is on the way
            }
            return PostStatus.IN_PROGRESS;
        }
        lane.checked(op);
        if (unanswered.incrementAndGet() > queueDepth) {
            unanswered.decrementAndGet();
            lane.needRoom();
            return PostStatus.NO_RESOURCE;
        }
        UcxOp u = UcxOp.of(lane, op, UcxRegions.memoryHandle(op.localHandle(), lane.channel.iface));
        u.fencedBefore = fenceNext;
        synchronized (ledger) {
            if (!ledger.register(u)) { // the lane ended meanwhile: never sent
                unanswered.decrementAndGet();
                return PostStatus.IN_PROGRESS;
            }
        }
        if (!agent.submit(u)) {
            synchronized (ledger) {
                ledger.forget(op.token());
            }
            unanswered.decrementAndGet();
            lane.needRoom();
            return PostStatus.NO_RESOURCE; // the fence stays for the operation posted again
        }
        fenceNext = false;
        return PostStatus.IN_PROGRESS;
    }

    /** A weak fence (endpoint actor): it goes with the operation posted next. */
    void fenceNext() {
        fenceNext = !lane.channel.iface.completesInPlace();
    }

    PostStatus flush(long token) {
        if (!lane.isLive()) {
            return PostStatus.IN_PROGRESS; // the failure report is on the way, and fails the flush
        }
        if (unanswered.get() == 0) {
            return PostStatus.COMPLETED; // everything before it was answered: applied, and visible
        }
        if (!agent.submit(UcxOp.flush(lane, token, false))) {
            lane.needRoom();
            return PostStatus.NO_RESOURCE;
        }
        return PostStatus.IN_PROGRESS;
    }

    /**
     * To a peer on this host (its key table mapped here): answered once the peer's heartbeat moves
     * ({@link UcxHeartbeats}), so a slow handler holding the peer's progress agent fails no lane.
     * Elsewhere a probe that reaches the target's progress agent and comes back (a software flush),
     * where the lane carries messages; a lane that does not (cma) is answered while its channel lives
     * and its peer's process runs: it reaches the peer's memory without the peer.
     */
    PostStatus keepalive(long token) {
        if (!lane.isLive()) {
            return PostStatus.IN_PROGRESS;
        }
        if (onThisHost) {
            agent.submitControl(new UcxCommand.HeartbeatProbe(lane, token));
            return PostStatus.IN_PROGRESS;
        }
        if (!agent.submit(UcxOp.flush(lane, token, true))) {
            lane.needRoom();
            return PostStatus.NO_RESOURCE;
        }
        return PostStatus.IN_PROGRESS;
    }

    // ------------------------------------------------------------------ calling threads

    /**
     * An active message from the calling thread (under the endpoint's grant), its size checked by the
     * lane: queued for the agent in the order it is numbered, so its answer comes back, in order, to
     * the endpoint's ledger without the endpoint actor. Its bytes are copied here; on the agent's
     * thread it is sent at once, written straight from the caller's buffers into the request, and
     * copied only if it has to wait ({@link UcxOp#ownBytes}).
     */
    boolean activeMessageNow(int id, ByteBuffer header, ByteBuffer payload, long origin, DirectAnswers a) {
        if (!lane.isLive() || !lane.channel.iface.attributes().has(UctIfaceAttributes.AM_BCOPY)) {
            return false;
        }
        ledger.answersTo(a);
        // On the agent's thread (a handler answering) the message is sent now, from the caller's
        // buffers, and copied only if it has to wait; any other thread's is copied first.
        boolean here = agent.isAgentThread();
        ByteBuffer h = here ? header : UcxOp.copy(header);
        ByteBuffer p = here ? payload : UcxOp.copy(payload);
        synchronized (ledger) { // numbered and queued in one step: answers come in this order
            if (ledger.ended() || unanswered.get() >= queueDepth || !agent.hasRoom()) {
                return false;
            }
            int out = unanswered.incrementAndGet();
            UcxOp op = UcxOp.direct(lane, UcxLane.DIRECT | a.queued(), id, h, p, origin, mayWait(out));
            ledger.directQueued(op);
            // On the agent's thread, sent now: not after this pass's replies
            boolean taken = agent.takeHere(op);
            if (here) {
                op.ownBytes(); // a no-op once sent; only this thread reads the op until it returns
            }
            if (!taken && !agent.submit(op)) { // the agent's queue is full (shared by its lanes) or it closed
                ledger.directNotQueued();
                unanswered.decrementAndGet();
                // Counted under the lock, before a later message can be numbered and answered: a
                // flush waits for a count of answers, which must not include this one's successor.
                a.abandoned(1, new dev.fenceline.EndpointFailedException("ucx: the progress agent took no more"
                        + " operations (its queue is full, or the transport closed); active message not sent"));
            }
        }
        return true;
    }

    /**
     * Whether the answer to an operation nobody waits for one by one may be held back by the target
     * ({@link UcxHeldAnswers}): where more follow it (another is out already: a stream, or handlers'
     * ping-pong), never where waiting could fill the lane's queue. A lone one before a flush is
     * answered at once, so that the flush needs not ask for it.
     *
     * @param out the lane's data operations queued or unanswered, this one included
     */
    private boolean mayWait(int out) {
        return out > 1 && out + UcxHeldAnswers.MAX < queueDepth;
    }

    /**
     * A flush waits for the answers to direct messages and posted operations, which the target may
     * hold back: asks for them
     * ({@link UcxOp#expedite}), queued behind the messages numbered before (under the lane's lock, as
     * they are).
     *
     * @return false if the agent had no room for the request (ask again later; the target's deadline
     *     sends them all the same)
     */
    boolean answersWanted() {
        synchronized (ledger) {
            if (!ledger.directAnswersMayWait() || ledger.ended()) {
                return true; // nothing the target may hold
            }
            UcxOp e = UcxOp.expedite(lane);
            return agent.takeHere(e) || agent.submit(e);
        }
    }

    /**
     * A direct message was answered (agent thread): the oldest one, since answers come in order.
     *
     * @param error its failure, or null
     * @return whether the token was the oldest direct message unanswered (else the answer is not one)
     */
    boolean directAnswered(long token, FencelineException error) {
        boolean mine;
        synchronized (ledger) {
            mine = ledger.directAnswered(token);
            if (mine) {
                unanswered.decrementAndGet();
            }
        }
        if (mine) {
            ledger.reportDirect(token, error);
        }
        return mine;
    }

    /**
     * A put or get of up to {@link #POSTED_MAX} bytes, or an atomic, from the calling thread (under
     * the endpoint's grant): numbered and queued for the agent in one step, under the lane's lock, so
     * the agent sends them in number order; the agent's thread completes it when the target answers.
     * If the lane ends first it is given back ({@link UcxLaneLedger#returnPosted}); a copy already
     * sent may still be applied, and the target's window recognizes the one the endpoint sends again.
     */
    boolean postNow(PostedOperation p) {
        TransportOp op = p.op();
        if (!postsDirectly || op.kind() == TransportOp.Kind.AM
                || op.local() != null && op.local().remaining() > POSTED_MAX) {
            return false; // messages have their own fast path; large payloads the actor sends
        }
        lane.checked(op);
        synchronized (ledger) {
            if (ledger.ended() || !lane.isLive() || unanswered.get() >= queueDepth || !agent.hasRoom()) {
                return false;
            }
            long sn = p.sequence();
            if (sn < 0) {
                return false; // the grant ended: the caller submits it to the actor
            }
            UcxOp u = ledger.numberPosted(lane, p, sn, p.answerMayWait() && mayWait(unanswered.get() + 1));
            unanswered.incrementAndGet();
            ledger.track(u);
            if (!agent.takeHere(u) && !agent.submit(u)) { // numbered, never sent
                lane.overflowed(new dev.fenceline.EndpointFailedException("ucx: " + lane + ": the progress agent's"
                        + " queue took no more operations (other lanes filled it, or the transport closed); the"
                        + " lane's posted operations go again elsewhere"));
            }
        }
        return true;
    }

    /**
     * Completes a posted operation the target answered (agent thread, outside the lane's lock: the
     * user's callbacks run here, in answer order).
     *
     * @param op what {@link UcxLane#answeredLocked} gave
     * @param value the fetched value, or 0
     * @param error the target's refusal, or null
     */
    static void postedAnswered(UcxOp op, long value, FencelineException error) {
        if (error == null) {
            op.posted.completed(value);
        } else {
            op.posted.failed(error);
        }
    }
}
