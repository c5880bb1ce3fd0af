package dev.fenceline.transport.shm;

import dev.fenceline.AtomicOp;
import dev.fenceline.FencelineException;
import dev.fenceline.LaneType;
import dev.fenceline.RemoteKey;
import dev.fenceline.spi.DirectAccess;
import dev.fenceline.spi.DirectAnswers;
import dev.fenceline.spi.LaneListener;
import dev.fenceline.spi.PostStatus;
import dev.fenceline.spi.Revocation;
import dev.fenceline.spi.TransportOp;
import dev.fenceline.spi.support.AbstractLane;
import dev.fenceline.spi.support.ExactlyOnceScope;
import dev.fenceline.spi.support.ExactlyOnceWindows;
import dev.fenceline.spi.support.Heartbeat;
import java.nio.ByteBuffer;
import java.util.EnumSet;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.atomic.AtomicIntegerFieldUpdater;
import java.util.concurrent.atomic.AtomicReferenceFieldUpdater;
import org.agrona.concurrent.AtomicBuffer;

/**
 * One lane to a worker in another process (or this one) on the same host. RMA and atomics on a
 * region in a shared segment go straight into this process's mapping of it ({@link Direct}): done
 * and remotely visible when {@link #post} returns. Everything else (active messages, memory that is
 * not shared) is a message in the peer's inbox ring, applied by the peer's polling thread and
 * answered in order. A direct access is taken only when no ring message of this lane is unanswered,
 * so the lane applies everything in post order.
 *
 * <p>Every ring message of the lane is claimed under one lock and remembered, in claim order, until
 * its answer comes (answers come in that order). When the endpoint gives the lane up, its gate in
 * this worker's control segment ({@link Gates}) is revoked: the peer then skips every message it
 * had not started, and the gate's count says how many it took. So each unanswered message's fate
 * is exact: taken, its answer follows (or, if the peer died, it may have been applied and will not
 * be again); not taken, it never will be.
 */
final class ShmLane extends AbstractLane implements DirectAccess {
    private static final Set<LaneType> ALL = EnumSet.of(LaneType.AM, LaneType.RMA, LaneType.RMA_BW, LaneType.AMO);
    /** With a cma lane beside it, bulk transfers are the cma lane's. */
    private static final Set<LaneType> BESIDE_CMA = EnumSet.of(LaneType.AM, LaneType.RMA, LaneType.AMO);
    final long conn;
    /** Set as the lane leaves its transport's {@link ShmLaneTable} (any thread; the polling thread reads it). */
    volatile boolean unlisted;
    /** This lane's gate in this worker's control segment. */
    final int gate;
    final Inbox peer;
    final ShmTransport transport;
    final int queueDepth;
    private volatile int maxFragment;
    static final AtomicIntegerFieldUpdater<ShmLane> UNANSWERED =
            AtomicIntegerFieldUpdater.newUpdater(ShmLane.class, "unanswered");
    private static final AtomicIntegerFieldUpdater<ShmLane> QUEUED =
            AtomicIntegerFieldUpdater.newUpdater(ShmLane.class, "queued");
    private static final AtomicIntegerFieldUpdater<ShmLane> FORGOTTEN =
            AtomicIntegerFieldUpdater.newUpdater(ShmLane.class, "forgotten");
    // Counts and flags are fields with updaters, and tables are made at first use: a worker may
    // hold ten thousand lanes, most of them idle.
    /** Messages in the peer's ring not answered yet (through {@link #UNANSWERED}). */
    volatile int unanswered;
    /** Actor thread only: the peer segment behind each key seen (null: not directly reachable). */
    Map<RemoteKey, DataSegment.Peer> segments; // made at the first key
    private volatile boolean wantReady;
    /** Whether the lane is in its transport's attention queue (see {@link ShmTransport#attend}). */
    private volatile int queued; // 1: queued, through QUEUED

    private final Set<LaneType> types;

    /** Tokens of direct active messages: the sign bit, then the caller's number. */
    static final long DIRECT = Long.MIN_VALUE;
    /**
     * The ring messages' record, and the lock that guards their claims, that record and the lane's
     * end: a message is either claimed and remembered before the lane is revoked (and then
     * answered, or its fate known), or refused.
     */
    final ShmMessageLedger ledger = new ShmMessageLedger();
    volatile DirectAnswers answers;
    /** The transport forgets the connection once, whoever gets there first (close, fail, last answer). */
    private volatile int forgotten; // 1: forgotten, through FORGOTTEN

    ShmLane(ShmTransport transport, long conn, int gate, Inbox peer, int queueDepth, int maxFragment,
            boolean besideCma) {
        super(ShmTransportProvider.NAME);
        this.types = besideCma ? BESIDE_CMA : ALL;
        this.transport = transport;
        this.conn = conn;
        this.gate = gate;
        this.peer = peer;
        this.queueDepth = queueDepth;
        this.maxFragment = maxFragment;
    }

    @Override
    public Set<LaneType> types() {
        return types;
    }

    @Override
    public int maxFragment() {
        return maxFragment;
    }

    void peerLimit(int limit) {
        maxFragment = Math.min(maxFragment, limit);
    }


    @Override
    public boolean deduplicates() {
        return true;
    }

    /** The target applies through its worker's windows, which every transport of it shares. */
    @Override
    public Object exactlyOnceScope() {
        return new ExactlyOnceScope(peer.worker, ExactlyOnceWindows.MEMBER);
    }

    /**
     * Revokes the lane's gate and reads which of its unanswered messages the peer took: those are
     * answered later (if the peer lives) or may have been applied (if it died); the rest never will
     * be, even if the peer is only stopped now and resumes later. Direct active messages that will
     * never run are reported so at once; GET buffers of messages that will not be answered are let go.
     */
    @Override
    public Revocation revoke() {
        boolean alive = peer.alive();
        boolean lost;
        ShmMessageLedger.Fates fates;
        synchronized (ledger) {
            if (revocation != null) {
                // Settled already (a close that came first does it): the same answer, and the gate
                // is not touched again, for its slot may be another lane's by now.
                return revocation;
            }
            ledger.markRevoked();
            lost = ledger.answersLost();
            // Answers the peer dropped (a RESET) will not come, as a dead peer's would not.
            fates = ledger.settle(transport.gates().revoke(gate), alive && !lost);
            revocation = fates;
        }
        ShmLaneEnd.directSettled(this, fates, lost, alive);
        ShmLaneEnd.forgetIfAnswered(this);
        return fates;
    }

    /** What the first {@link #revoke()} settled; null until then (guarded by the ledger's lock). */
    private ShmMessageLedger.Fates revocation;

    /** Answers taken before the revocation were decided then: the endpoint waits for each of them. */
    @Override
    protected boolean answersAfterEnd() {
        return true;
    }

    /** A failure found before the endpoint bound the lane is reported at bind (AbstractLane). */
    @Override
    public void bind(LaneListener l) {
        listen(l);
    }

    /** @return whether the lane carries operations (for the transport) */
    boolean isLive() {
        return live();
    }

    // For ShmLanePosting and ShmDirectAccess: AbstractLane's own are protected.

    /** {@link #checkedPayload}: throws if the operation exceeds the lane's limit. */
    int checked(TransportOp op) {
        return checkedPayload(op);
    }

    /** {@link #checkPayload} for an active message of this many bytes. */
    void checkMessage(int payloadBytes) {
        checkPayload(TransportOp.Kind.AM, payloadBytes);
    }

    // ------------------------------------------------------------------ endpoint side

    @Override
    public PostStatus post(TransportOp op) {
        if (!live()) {
            synchronized (ledger) {
                ledger.neverSent(op.token()); // lost with the lane: its failure report is on the way
            }
            return PostStatus.IN_PROGRESS;
        }
        // Straight into the mapping only what no earlier copy may have applied: a copy that may
        // have goes through the ring, where the target's window recognizes it.
        if (op.key() != null && op.kind() != TransportOp.Kind.AM && unanswered == 0 && !op.mayHaveApplied()) {
            checkedPayload(op); // refused over the lane's limit, as in the ring, whatever memory it names
            DataSegment.Peer seg = ShmDirectAccess.segment(this, op.key());
            if (seg != null) {
                op.result(Direct.apply(op, seg));
                return PostStatus.COMPLETED;
            }
        }
        return ShmLanePosting.send(this, op);
    }

    @Override
    public boolean putNow(RemoteKey key, long address, ByteBuffer src) {
        return ShmDirectAccess.putNow(this, key, address, src); // a static call: the hot path stays direct
    }

    @Override
    public boolean atomicPostNow(RemoteKey key, long address, AtomicOp op, int width, long operand) {
        return ShmDirectAccess.atomicPostNow(this, key, address, op, width, operand);
    }

    @Override
    public boolean getNow(RemoteKey key, long address, ByteBuffer dst) {
        return ShmDirectAccess.getNow(this, key, address, dst);
    }

    @Override
    public Long atomicFetchNow(RemoteKey key, long address, AtomicOp op, int width, long operand,
            long compare) {
        return ShmDirectAccess.atomicFetchNow(this, key, address, op, width, operand, compare);
    }

    @Override
    public boolean activeMessageNow(int id, ByteBuffer header, ByteBuffer payload, long origin, DirectAnswers a) {
        return ShmLanePosting.activeMessageNow(this, id, header, payload, origin, a);
    }

    /** The transport forgets the connection (and tells the peer); once. */
    void forget() {
        if (FORGOTTEN.compareAndSet(this, 0, 1)) {
            transport.closed(this);
        }
    }

    /** @return whether answers are owed on this lane (even after it was given up): held ones, direct ones */
    boolean awaitingAnswers() {
        synchronized (ledger) {
            return ledger.awaitingAnswers();
        }
    }

    /** @return the endpoint's listener, for {@link ShmLaneEnd} */
    LaneListener listenerNow() {
        return listener();
    }

    @Override
    public PostStatus flush(long token) {
        if (!live()) {
            return PostStatus.IN_PROGRESS;
        }
        if (unanswered == 0) {
            return PostStatus.COMPLETED; // direct accesses are complete on return, ring ones answered
        }
        return ShmLanePosting.probe(this, token);
    }

    /**
     * Answered once the peer's heartbeat moves (see {@link Heartbeat}): proof that its process runs,
     * which a message through the ring is not when a slow handler holds the peer's polling thread
     * (the lane is then slow, not dead, and so are the peer's other lanes, which must not fail over
     * for it). A stopped or paused process does not beat: its probe waits, and keepalive fails the lane.
     */
    @Override
    public PostStatus keepalive(long token) {
        if (!live()) {
            return PostStatus.IN_PROGRESS;
        }
        HeartbeatProbes p = probes;
        if (p == null) {
            PROBES.compareAndSet(this, null, new HeartbeatProbes(peer::heartbeat, this::probeAnswered));
            p = probes;
        }
        p.add(token);
        transport.attend(this);
        return PostStatus.IN_PROGRESS;
    }

    /**
     * The transport watches the peer process's heartbeat once for all its lanes (its watcher fails
     * them when it stands still for the keepalive timeout) and its death: no probe per lane.
     */
    @Override
    public boolean watchesLiveness() {
        return true;
    }

    private static final AtomicReferenceFieldUpdater<ShmLane, HeartbeatProbes> PROBES =
            AtomicReferenceFieldUpdater.newUpdater(ShmLane.class, HeartbeatProbes.class, "probes");
    /** Keepalive probes waiting for the peer's heartbeat to move; null until the first (through {@link #PROBES}). */
    private volatile HeartbeatProbes probes;

    /** Polling thread: answers the probes whose peer beat since. */
    void answerProbes() {
        HeartbeatProbes p = probes;
        if (p != null) {
            p.answer();
        }
    }

    /** Polling thread: the peer's heartbeat moved since this keepalive probe was queued. */
    private void probeAnswered(long token) {
        LaneListener l = listener();
        if (live() && l != null) {
            l.onFlushed(token);
        }
    }

    /** Ring messages are applied in order and direct accesses only when none is pending. */
    @Override
    public void fence() {
    }

    @Override
    public void close() {
        boolean revoked;
        synchronized (ledger) {
            revoked = ledger.revoked();
        }
        giveUp();
        if (!revoked) {
            // Closed without being asked what became of its messages (an endpoint closes lanes it
            // never used so): the gate closes now all the same, or the transport would never forget
            // the lane and its gate slot, and a worker would run out of them.
            revoke();
        }
    }

    /** Given up as failed: like a close. What becomes of its messages is {@link #revoke()}'s to say. */
    @Override
    public void abort(Throwable cause) {
        giveUp();
    }

    private void giveUp() {
        if (end(Phase.CLOSED) != Phase.CLOSED) {
            synchronized (ledger) {
                ledger.givenUp(); // no reply writes into a GET buffer after this returns
            }
            ShmLaneEnd.forgetIfAnswered(this);
        }
    }

    // ------------------------------------------------------------------ polling thread

    /**
     * A reply for this lane; {@code buffer} at {@code offset} holds the GET data. Replies come in
     * the order the lane claimed its messages: one that does not answer the oldest unanswered
     * message is a broken or hostile peer, and fails the lane, as does an answer of the wrong kind (a
     * get's answer is its data or a NACK, and only a get's answer carries data). Whether the endpoint
     * still waits for the answer is decided here, under the same lock as the revocation.
     */
    void answered(int type, long token, long value, FencelineException error, AtomicBuffer buffer, int offset,
            int length) {
        int taken;
        int asked;
        synchronized (ledger) {
            taken = ledger.take(type, token, buffer, offset, length);
            asked = ledger.askedLength();
            if (taken >= ShmMessageLedger.NOTHING) {
                UNANSWERED.decrementAndGet(this);
            }
        }
        if (taken < ShmMessageLedger.NOTHING) {
            FencelineException e = new FencelineException("shm: " + peer.name + " answered "
                    + (type == ShmWire.GET_DATA || taken == ShmMessageLedger.OUT_OF_ORDER ? "message " : "get ") + token
                    + " of lane " + Long.toHexString(conn) + (taken == ShmMessageLedger.OUT_OF_ORDER
                            ? " out of the order it was sent in" : " with a " + ShmWire.name(type)));
            // A broken peer: none of its answers can be waited for (the one it owed may never come),
            // so what it took is settled as if it had dropped them all.
            reset(e);
            return;
        }
        if (taken == ShmMessageLedger.BAD_LENGTH) {
            FencelineException b = new FencelineException("shm: GET_DATA of " + length + " bytes for a get of " + asked
                    + " from " + peer.name);
            whileLive(() -> fail(b));
        }
        boolean direct = taken == ShmMessageLedger.DIRECT;
        boolean deliver = taken == ShmMessageLedger.DELIVER;
        if (direct) {
            answers.answered(token & ~DIRECT, type == ShmWire.NACK ? error : null);
        }
        if (deliver) {
            LaneListener l = listener();
            if (type == ShmWire.ACK) {
                completed(token, value);
            } else {
                reportCompletions(); // completions before any other answer, in the order they came
                switch (type) {
                    case ShmWire.FLUSHED -> l.onFlushed(token);
                    case ShmWire.NACK -> l.onFailed(token, error);
                    default -> l.onCompleted(token, type == ShmWire.GET_DATA ? 0 : value);
                }
            }
        }
        if (ledger.revoked()) {
            ShmLaneEnd.forgetIfAnswered(this);
        }
        transport.attendHere(this); // its batch is reported, and room looked for, after this pass
    }

    /**
     * The target dropped this connection with every answer it owed (a RESET; polling thread): the
     * lane fails, and no answer is awaited any more, whether the endpoint gave the lane up before
     * (its held answers fail now) or does so after (what the peer took counts as unanswered).
     */
    void reset(Throwable cause) {
        synchronized (ledger) {
            ledger.markAnswersLost();
        }
        fail(cause);
        if (ledger.revoked()) {
            ShmLaneEnd.abandonDirect(this, cause);
        }
    }

    /** The endpoint waits for room: the polling thread says when there is. */
    void needRoom() {
        wantReady = true;
        transport.attend(this);
    }

    /** @return whether the polling thread has something to do for this lane: completions, room, probes */
    boolean needsPolling() {
        HeartbeatProbes p = probes;
        return completionsPending() || wantReady || (p != null && !p.isEmpty());
    }

    /** @return whether the lane was not queued and now is (then the caller queues it) */
    boolean markQueued() {
        return queued == 0 && QUEUED.compareAndSet(this, 0, 1);
    }

    /** The polling thread took the lane off its list. */
    void unqueued() {
        queued = 0;
    }

    /** Reports the completions gathered so far (polling thread). */
    void flushBatch() {
        reportCompletions();
    }

    /**
     * @return the bytes of the peer's ring in use, from one read of each position: its head is the
     *     peer's word, and the ring's own size() reads again for as long as that word keeps changing
     */
    private long ringUsed() {
        long used = peer.ring.producerPosition() - peer.ring.consumerPosition();
        return Math.max(0, Math.min(used, peer.ring.capacity()));
    }

    /** After a polling pass: the gathered completions, and room again in the lane and the peer's ring. */
    void pollComplete() {
        reportCompletions();
        if (wantReady && unanswered < queueDepth && ringUsed() < peer.ring.capacity() / 2) {
            wantReady = false;
            LaneListener l = listener();
            if (l != null) {
                l.onReady();
            }
        }
    }

    /**
     * The peer process died, or its inbox broke: the lane is dead. A live lane reports it and its
     * endpoint asks ({@link #revoke()}) what became of each message; a lane given up already answers
     * what it still owes as unknown.
     */
    void fail(Throwable cause) {
        reportCompletions(); // what completed before the peer died did complete
        boolean failedNow = markFailed();
        if (failedNow) {
            synchronized (ledger) {
                ledger.letGoGetBuffers(); // no reply writes into a GET buffer after this
            }
            reportFailed(cause);
        } else if (ledger.revoked()) {
            ShmLaneEnd.abandonDirect(this, cause);
        }
    }

    @Override
    public String toString() {
        return "ShmLane[" + id() + " to " + peer.name + ", conn " + Long.toHexString(conn) + "]";
    }
}
