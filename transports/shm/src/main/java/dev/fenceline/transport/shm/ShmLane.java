package dev.fenceline.transport.shm;

import dev.fenceline.FencelineException;
import dev.fenceline.LaneType;
import dev.fenceline.RemoteKey;
import dev.fenceline.OutcomeUnknownException;
import dev.fenceline.spi.DirectAccess;
import dev.fenceline.spi.DirectAnswers;
import dev.fenceline.spi.LaneListener;
import dev.fenceline.spi.PostStatus;
import dev.fenceline.spi.TransportOp;
import dev.fenceline.spi.support.AbstractLane;
import java.nio.ByteBuffer;
import java.util.EnumSet;
import java.util.IdentityHashMap;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.atomic.AtomicIntegerFieldUpdater;
import java.util.concurrent.atomic.AtomicReferenceFieldUpdater;
import org.agrona.collections.Long2ObjectHashMap;
import org.agrona.concurrent.AtomicBuffer;
import org.agrona.concurrent.ringbuffer.ManyToOneRingBuffer;

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
    /** This lane's gate in this worker's control segment. */
    final int gate;
    final Inbox peer;
    private final ShmTransport transport;
    private final int queueDepth;
    private volatile int maxFragment;
    private static final AtomicIntegerFieldUpdater<ShmLane> UNANSWERED =
            AtomicIntegerFieldUpdater.newUpdater(ShmLane.class, "unanswered");
    private static final AtomicIntegerFieldUpdater<ShmLane> QUEUED =
            AtomicIntegerFieldUpdater.newUpdater(ShmLane.class, "queued");
    private static final AtomicIntegerFieldUpdater<ShmLane> FORGOTTEN =
            AtomicIntegerFieldUpdater.newUpdater(ShmLane.class, "forgotten");
    // Counts and flags are fields with updaters, and tables are made at first use: a worker may
    // hold ten thousand lanes, most of them idle.
    /** Messages in the peer's ring not answered yet (through {@link #UNANSWERED}). */
    private volatile int unanswered;
    /** Under directLock: the user's buffers of gets sent and not answered, by token; null until the first. */
    private Long2ObjectHashMap<ByteBuffer> gets;
    /** Actor thread only: the peer segment behind each key seen (null: not directly reachable). */
    private Map<RemoteKey, DataSegment.Peer> segments; // made at the first key
    private volatile boolean wantReady;
    /** Whether the lane is in its transport's attention queue (see {@link ShmTransport#attend}). */
    private volatile int queued; // 1: queued, through QUEUED

    private final Set<LaneType> types;

    /** Tokens of direct active messages: the sign bit, then the caller's number. */
    private static final long DIRECT = Long.MIN_VALUE;
    /**
     * Guards the ring messages' claims, their record and the lane's end: a message is either claimed
     * and remembered before the lane is revoked (and then answered, or its fate known), or refused.
     */
    private final Object directLock = new Object();
    /** Under directLock: the tokens of ring messages claimed and not yet answered, in claim order. */
    private org.agrona.collections.LongArrayQueue posted; // made at the first message

    /** Under directLock: {@link #posted}, made if need be. */
    private org.agrona.collections.LongArrayQueue posted() {
        if (posted == null) {
            posted = new org.agrona.collections.LongArrayQueue(Long.MAX_VALUE);
        }
        return posted;
    }
    /** Under directLock: answers taken so far (the peer answers in claim order). */
    private long answeredCount;
    /** Under directLock: the endpoint gave the lane up and asked what became of its messages. */
    private boolean revoked;
    // The sets only a lane's end fills are created then (null until): a worker holds thousands of lanes.
    /** Under directLock: tokens the peer took before the revocation, whose answers the endpoint still waits for. */
    private org.agrona.collections.LongHashSet held;
    /** Under directLock: tokens the lane took while it was no longer live, and never sent. */
    private org.agrona.collections.LongHashSet neverSent;
    /** Under directLock: tokens of gets sent and not answered (their buffers may be let go at the give-up). */
    private org.agrona.collections.LongHashSet getTokens;
    /** Under directLock: tokens of active messages sent through the actor and not answered. */
    private org.agrona.collections.LongHashSet amTokens;
    /** Under directLock: gets whose answer came after the lane was given up, and went nowhere. */
    private org.agrona.collections.LongHashSet droppedGets;
    /** Under directLock: direct active messages queued and not yet answered. */
    private int directUnanswered;
    /** Under directLock: the endpoint gave the lane up while answers were owed; close after them. */
    private boolean closeWhenAnswered;
    private volatile DirectAnswers answers;
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
        return new dev.fenceline.spi.support.ExactlyOnceScope(peer.worker, dev.fenceline.spi.support.ExactlyOnceWindows.MEMBER);
    }

    /**
     * Revokes the lane's gate and reads which of its unanswered messages the peer took: those are
     * answered later (if the peer lives) or may have been applied (if it died); the rest never will
     * be, even if the peer is only stopped now and resumes later. Direct active messages that will
     * never run are reported so at once; GET buffers of messages that will not be answered are let go.
     */
    @Override
    public dev.fenceline.spi.Revocation revoke() {
        boolean alive = peer.alive();
        org.agrona.collections.LongHashSet notTaken = new org.agrona.collections.LongHashSet();
        org.agrona.collections.LongHashSet stopped = new org.agrona.collections.LongHashSet();
        int directNotTaken = 0;
        int directStopped = 0;
        synchronized (directLock) {
            revoked = true;
            Gates.Revoked g = transport.gates().revoke(gate);
            // Taken completely: answered already (in this worker's inbox, or the peer's backlog).
            long done = Math.max(0, g.taken() - answeredCount);
            long taken = Math.max(0, g.taken() + (g.inProgress() ? 1 : 0) - answeredCount);
            org.agrona.collections.LongArrayQueue.LongIterator it = posted().iterator();
            for (long k = 0; it.hasNext(); k++) {
                long token = it.nextValue();
                boolean wasTaken = k < taken;
                // What the peer is still working on: an atomic or a write ends within microseconds once
                // the peer runs, and work fenced behind it must wait for it; a handler may take any time,
                // and nothing is fenced behind a message, so the endpoint does not wait for one.
                boolean message = token < 0 || contains(amTokens, token);
                boolean answerFollows = alive && wasTaken && !contains(getTokens, token) && (k < done || !message);
                if (answerFollows) {
                    if (token >= 0) {
                        held = added(held, token); // its answer follows (a direct message's is counted apart)
                    }
                    continue;
                }
                if (token < 0) {
                    if (wasTaken) {
                        directStopped++;
                    } else {
                        directNotTaken++;
                    }
                } else {
                    (wasTaken ? stopped : notTaken).add(token);
                    if (gets != null) {
                        gets.remove(token); // no answer will write into its buffer
                    }
                }
            }
            directUnanswered -= directNotTaken + directStopped;
            if (neverSent != null) {
                notTaken.addAll(neverSent);
            }
            if (droppedGets != null) {
                stopped.addAll(droppedGets);
            } // a get has no effect, but its answer went nowhere: send it again
        }
        if (directNotTaken > 0) {
            answers.abandoned(directNotTaken, new dev.fenceline.EndpointFailedException("shm: " + directNotTaken
                    + " active message(s) sent directly on the lane to " + peer.name + " were withdrawn before the"
                    + " peer took them: not run"));
        }
        if (directStopped > 0) {
            answers.abandoned(directStopped, new OutcomeUnknownException("shm: " + directStopped + " active"
                    + " message(s) sent directly on the lane to " + peer.name + " were taken by the peer, which"
                    + (alive ? " had not answered when the lane was given up (a handler may still be running)"
                            : " died before it answered") + ": each may or may not have run its handler"));
        }
        forgetIfAnswered();
        return token -> notTaken.contains(token) ? dev.fenceline.spi.Revocation.Fate.REVOKED
                : stopped.contains(token) ? dev.fenceline.spi.Revocation.Fate.STOPPED
                : dev.fenceline.spi.Revocation.Fate.ANSWER_FOLLOWS; // taken, or answered already
    }

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

    // ------------------------------------------------------------------ endpoint side

    @Override
    public PostStatus post(TransportOp op) {
        if (!live()) {
            synchronized (directLock) {
                neverSent = added(neverSent, op.token()); // lost with the lane: its failure report is on the way
            }
            return PostStatus.IN_PROGRESS;
        }
        if (op.key() != null && op.kind() != TransportOp.Kind.AM && unanswered == 0) {
            DataSegment.Peer seg = segment(op.key());
            if (seg != null) {
                op.result(Direct.apply(op, seg));
                return PostStatus.COMPLETED;
            }
        }
        return send(op);
    }

    /** The fast path: any thread, while the endpoint's grant holds; only with no ring message pending. */
    @Override
    public boolean putNow(RemoteKey key, long address, ByteBuffer src) {
        if (!live() || unanswered != 0) {
            return false;
        }
        DataSegment.Peer seg = transport.peerSegment(key);
        if (seg == null) {
            return false;
        }
        Direct.put(seg, key, address, src);
        return true;
    }

    /**
     * The peer's inbox takes messages from any thread in claim order, so a direct active message
     * keeps its place among the lane's other messages. The peer's answer comes back to the polling
     * thread, which reports it to {@code a} without the endpoint actor.
     */
    @Override
    public boolean activeMessageNow(int id, ByteBuffer header, ByteBuffer payload, long origin, DirectAnswers a) {
        int h = header.remaining();
        int payloadBytes = h + payload.remaining();
        checkPayload(TransportOp.Kind.AM, payloadBytes);
        if (answers == null) {
            answers = a; // one endpoint per lane: always the same
        }
        synchronized (directLock) {
            if (!live() || revoked || !reserve()) {
                return false;
            }
            ManyToOneRingBuffer ring = peer.ring;
            int at = ring.tryClaim(ShmWire.AM, ShmWire.AM_DATA + payloadBytes);
            if (at < 0) {
                UNANSWERED.decrementAndGet(this);
                return false; // full: the normal path waits for room
            }
            AtomicBuffer b = ring.buffer();
            long index;
            try {
                // No exactly-once number: see abandonDirect().
                ShmRecords.directActiveMessage(b, at, conn, origin, id, header, h, payload);
            } catch (RuntimeException e) {
                ring.abort(at); // never leave a claimed record behind: it would block the peer's inbox
                UNANSWERED.decrementAndGet(this);
                throw e;
            }
            // Numbered only now that nothing can stop it, and under the lock its answer takes too:
            // answers come back in this order.
            index = a.queued();
            ShmRecords.token(b, at, DIRECT | index);
            if (!commit(ring, at)) {
                a.abandoned(1, new dev.fenceline.EndpointFailedException("shm: " + peer.name + " skipped a direct"
                        + " active message this lane had half written: not run"));
                return true; // numbered, and answered as abandoned
            }
            posted().addLong(DIRECT | index);
            directUnanswered++;
            return true;
        }
    }

    /** The transport forgets the connection (and tells the peer); once. */
    void forget() {
        if (FORGOTTEN.compareAndSet(this, 0, 1)) {
            transport.closed(this);
        }
    }

    private static boolean contains(org.agrona.collections.LongHashSet set, long token) {
        return set != null && set.contains(token);
    }

    private static void remove(org.agrona.collections.LongHashSet set, long token) {
        if (set != null) {
            set.remove(token);
        }
    }

    /** @return {@code set} with {@code token} added, the set created if it was null */
    private static org.agrona.collections.LongHashSet added(org.agrona.collections.LongHashSet set, long token) {
        org.agrona.collections.LongHashSet s = set != null ? set : new org.agrona.collections.LongHashSet();
        s.add(token);
        return s;
    }

    /** @return whether answers are owed on this lane (even after it was given up): held ones, direct ones */
    boolean awaitingAnswers() {
        synchronized (directLock) {
            return directUnanswered > 0 || (held != null && !held.isEmpty());
        }
    }

    /** After the lane was given up: the transport forgets it once no answer is owed any more. */
    private void forgetIfAnswered() {
        boolean close;
        synchronized (directLock) {
            close = closeWhenAnswered && revoked && directUnanswered == 0 && (held == null || held.isEmpty());
            if (close) {
                closeWhenAnswered = false;
            }
        }
        if (close) {
            forget();
        }
    }

    /** The lane died: no answer will come for the direct messages still out, nor for the held ones. */
    private void abandonDirect(Throwable cause) {
        int n;
        long[] owed;
        synchronized (directLock) {
            n = directUnanswered;
            directUnanswered = 0;
            owed = new long[held == null ? 0 : held.size()];
            if (held != null) {
                org.agrona.collections.LongHashSet.LongIterator it = held.iterator();
                for (int i = 0; it.hasNext(); i++) {
                    owed[i] = it.nextValue();
                }
            }
            held = null;
        }
        if (n > 0) {
            answers.abandoned(n, new OutcomeUnknownException("shm: " + n + " active message(s) sent directly on the"
                    + " lane to " + peer.name + " got no answer before it failed (" + cause + "): each may or may"
                    + " not have reached its handler"));
        }
        LaneListener l = listener();
        for (long token : owed) { // the endpoint waits for these: it must hear the truth
            l.onFailed(token, new OutcomeUnknownException("shm: " + peer.name + " took this operation and died"
                    + " before it answered (" + cause + "): it may or may not have been applied"));
        }
        forgetIfAnswered();
    }

    @Override
    public boolean atomicPostNow(RemoteKey key, long address, dev.fenceline.AtomicOp op, int width, long operand) {
        if (!live() || unanswered != 0) {
            return false;
        }
        DataSegment.Peer seg = transport.peerSegment(key);
        if (seg == null) {
            return false;
        }
        Direct.atomicPost(seg, key, address, op, width, operand);
        return true;
    }

    @Override
    public boolean getNow(RemoteKey key, long address, ByteBuffer dst) {
        if (!live() || unanswered != 0) {
            return false;
        }
        DataSegment.Peer seg = transport.peerSegment(key);
        if (seg == null) {
            return false;
        }
        Direct.get(seg, key, address, dst);
        return true;
    }

    @Override
    public Long atomicFetchNow(RemoteKey key, long address, dev.fenceline.AtomicOp op, int width, long operand,
            long compare) {
        if (!live() || unanswered != 0) {
            return null;
        }
        DataSegment.Peer seg = transport.peerSegment(key);
        if (seg == null) {
            return null;
        }
        return Direct.fetch(seg, key, address, op, width, operand, compare);
    }

    private DataSegment.Peer segment(RemoteKey key) {
        if (segments == null) {
            segments = new IdentityHashMap<>(4); // grows if need be
        } else if (segments.containsKey(key)) {
            return segments.get(key);
        }
        DataSegment.Peer seg = transport.peerSegment(key);
        if (segments.size() > 4096) {
            segments.clear(); // a bounded cache: keys are usually few and long-lived
        }
        segments.put(key, seg);
        return seg;
    }

    private PostStatus send(TransportOp op) {
        int payload = checkedPayload(op);
        int type;
        int length;
        switch (op.kind()) {
            case PUT -> {
                type = ShmWire.PUT;
                length = ShmWire.RMA_DATA + payload;
            }
            case GET -> {
                type = ShmWire.GET;
                length = ShmWire.GET_LENGTH + 4;
            }
            case AM -> {
                type = ShmWire.AM;
                length = ShmWire.AM_DATA + payload;
            }
            default -> {
                type = ShmWire.ATOMIC;
                length = ShmWire.ATOMIC_LENGTH;
            }
        }
        synchronized (directLock) { // claim order is the order answers come in
            if (revoked) {
                neverSent = added(neverSent, op.token());
                return PostStatus.IN_PROGRESS;
            }
            if (!reserve()) {
                return PostStatus.NO_RESOURCE;
            }
            ManyToOneRingBuffer ring = peer.ring;
            int at = ring.tryClaim(type, length);
            if (at < 0) {
                UNANSWERED.decrementAndGet(this);
                needRoom(); // the peer's ring is full; the polling thread says when it has room
                return PostStatus.NO_RESOURCE;
            }
            try {
                // The ledger learns of an active message before its body is written and of a get
                // after; the catch below forgets either.
                AtomicBuffer b = ring.buffer();
                ShmRecords.prefix(b, at, conn, op);
                if (op.kind() == TransportOp.Kind.AM) {
                    amTokens = added(amTokens, op.token());
                }
                ShmRecords.body(b, at, op, payload);
                if (op.kind() == TransportOp.Kind.GET) {
                    if (gets == null) {
                        gets = new Long2ObjectHashMap<>();
                    }
                    gets.put(op.token(), op.local());
                    getTokens = added(getTokens, op.token());
                }
            } catch (RuntimeException e) {
                ring.abort(at); // never leave a claimed record behind: it would block the peer's inbox
                UNANSWERED.decrementAndGet(this);
                if (gets != null) {
                    gets.remove(op.token());
                }
                remove(getTokens, op.token());
                remove(amTokens, op.token());
                throw e;
            }
            if (commit(ring, at)) {
                posted().addLong(op.token());
            } else {
                neverSent = added(neverSent, op.token()); // skipped by the peer, never applied; the lane fails
            }
        }
        return PostStatus.IN_PROGRESS;
    }

    /**
     * Commits a claimed record.
     *
     * @return false if the peer skipped it meanwhile (it took this process for dead, or a record of
     *     it for abandoned): then the lane fails, with the reason
     */
    private boolean commit(ManyToOneRingBuffer ring, int at) {
        try {
            ring.commit(at);
            peer.doorbell.ring();
            return true;
        } catch (IllegalStateException skipped) {
            UNANSWERED.decrementAndGet(this);
            fail(new dev.fenceline.EndpointFailedException("shm: " + peer.name + " skipped a message this lane had"
                    + " half written (" + skipped.getMessage() + "); the lane is not usable"));
            return false;
        }
    }

    /** Counts one more unanswered ring message, or says there is no room. */
    private boolean reserve() {
        if (UNANSWERED.incrementAndGet(this) <= queueDepth) {
            return true;
        }
        UNANSWERED.decrementAndGet(this);
        needRoom();
        return false;
    }

    @Override
    public PostStatus flush(long token) {
        if (!live()) {
            return PostStatus.IN_PROGRESS;
        }
        if (unanswered == 0) {
            return PostStatus.COMPLETED; // direct accesses are complete on return, ring ones answered
        }
        return probe(token);
    }

    /**
     * Answered once the peer's heartbeat moves (see {@link dev.fenceline.spi.support.Heartbeat}): proof that its process runs,
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

    private PostStatus probe(long token) {
        synchronized (directLock) {
            if (revoked) {
                return PostStatus.IN_PROGRESS;
            }
            if (!reserve()) {
                return PostStatus.NO_RESOURCE;
            }
            int at = peer.ring.tryClaim(ShmWire.FLUSH, 16);
            if (at < 0) {
                UNANSWERED.decrementAndGet(this);
                needRoom();
                return PostStatus.NO_RESOURCE;
            }
            ShmRecords.flush(peer.ring.buffer(), at, conn, token);
            if (commit(peer.ring, at)) {
                posted().addLong(token);
            }
        }
        return PostStatus.IN_PROGRESS;
    }

    /** Ring messages are applied in order and direct accesses only when none is pending. */
    @Override
    public void fence() {
    }

    @Override
    public void close() {
        giveUp();
    }

    /** Given up as failed: like a close. What becomes of its messages is {@link #revoke()}'s to say. */
    @Override
    public void abort(Throwable cause) {
        giveUp();
    }

    private void giveUp() {
        if (end(Phase.CLOSED) != Phase.CLOSED) {
            synchronized (directLock) {
                gets = null; // no reply writes into a GET buffer after this returns
                closeWhenAnswered = true; // forgotten once revoked and no answer is owed
            }
            forgetIfAnswered();
        }
    }

    // ------------------------------------------------------------------ polling thread

    /**
     * A reply for this lane; {@code buffer} at {@code offset} holds the GET data. Replies come in
     * the order the lane claimed its messages: one that does not answer the oldest unanswered
     * message is a broken or hostile peer, and fails the lane. Whether the endpoint still waits for
     * the answer is decided here, under the same lock as the revocation.
     */
    void answered(int type, long token, long value, FencelineException error, AtomicBuffer buffer, int offset,
            int length) {
        boolean deliver;
        boolean direct = false;
        boolean inOrder;
        ByteBuffer dst = null;
        FencelineException bad = null;
        synchronized (directLock) {
            inOrder = posted != null && !posted.isEmpty() && posted.peekLong() == token;
            if (inOrder) {
                posted.pollLong();
                answeredCount++;
                UNANSWERED.decrementAndGet(this);
                remove(getTokens, token);
                remove(amTokens, token);
            }
            if (token < 0) {
                direct = inOrder && directUnanswered > 0; // not if the lane's end already abandoned it
                if (direct) {
                    directUnanswered--;
                }
                deliver = false;
            } else {
                deliver = inOrder && (!revoked || (held != null && held.remove(token)));
                if (deliver && (type == ShmWire.GET_DATA || type == ShmWire.NACK)) {
                    dst = gets == null ? null : gets.remove(token);
                    if (type == ShmWire.GET_DATA) {
                        if (dst == null) {
                            droppedGets = added(droppedGets, token); // given up first: no buffer to write, no answer
                            deliver = false;
                        } else if (length != dst.remaining()) {
                            bad = new FencelineException("shm: GET_DATA of " + length + " bytes for a get of "
                                    + dst.remaining() + " from " + peer.name);
                            droppedGets = added(droppedGets, token);
                            deliver = false;
                        } else {
                            buffer.getBytes(offset, dst, dst.position(), dst.remaining()); // under the lock: before any give-up
                        }
                    }
                }
            }
        }
        if (!inOrder) {
            FencelineException order = new FencelineException("shm: " + peer.name + " answered message " + token
                    + " of lane " + Long.toHexString(conn) + " out of the order it was sent in");
            whileLive(() -> fail(order));
            return;
        }
        if (bad != null) {
            FencelineException b = bad;
            whileLive(() -> fail(b));
        }
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
        if (revoked) {
            forgetIfAnswered();
        }
        transport.attendHere(this); // its batch is reported, and room looked for, after this pass
    }

    /** The endpoint waits for room: the polling thread says when there is. */
    private void needRoom() {
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

    /** After a polling pass: the gathered completions, and room again in the lane and the peer's ring. */
    void pollComplete() {
        reportCompletions();
        if (wantReady && unanswered < queueDepth && peer.ring.size() < peer.ring.capacity() / 2) {
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
            synchronized (directLock) {
                gets = null; // no reply writes into a GET buffer after this
            }
            reportFailed(cause);
        } else if (revoked) {
            abandonDirect(cause);
        }
    }

    @Override
    public String toString() {
        return "ShmLane[" + id() + " to " + peer.name + ", conn " + Long.toHexString(conn) + "]";
    }
}
