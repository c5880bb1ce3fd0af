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
import dev.fenceline.spi.support.WireCodes;
import java.nio.ByteBuffer;
import java.util.EnumSet;
import java.util.IdentityHashMap;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.ConcurrentHashMap;
import org.agrona.concurrent.AtomicBuffer;
import org.agrona.concurrent.ringbuffer.ManyToOneRingBuffer;

/**
 * One lane to a worker in another process (or this one) on the same host. RMA and atomics on a
 * region in a shared segment go straight into this process's mapping of it ({@link Direct}): done
 * and remotely visible when {@link #post} returns. Everything else (active messages, memory that is
 * not shared) is a message in the peer's inbox ring, applied by the peer's polling thread and
 * answered in order. A direct access is taken only when no ring message of this lane is unanswered,
 * so the lane applies everything in post order.
 */
final class ShmLane extends AbstractLane implements DirectAccess {
    private static final Set<LaneType> ALL = EnumSet.of(LaneType.AM, LaneType.RMA, LaneType.RMA_BW, LaneType.AMO);
    /** With a cma lane beside it, bulk transfers are the cma lane's. */
    private static final Set<LaneType> BESIDE_CMA = EnumSet.of(LaneType.AM, LaneType.RMA, LaneType.AMO);
    final long conn;
    final Inbox peer;
    private final ShmTransport transport;
    private final int queueDepth;
    private volatile int maxFragment;
    private final AtomicInteger unanswered = new AtomicInteger();
    private final Map<Long, ByteBuffer> gets = new ConcurrentHashMap<>();
    /** Actor thread only: the peer segment behind each key seen (null: not directly reachable). */
    private final Map<RemoteKey, DataSegment.Peer> segments = new IdentityHashMap<>();
    private volatile boolean wantReady;
    private volatile Throwable failure;

    private final Set<LaneType> types;

    /** Tokens of direct active messages: the sign bit, then the caller's number. */
    private static final long DIRECT = Long.MIN_VALUE;
    /**
     * Guards the direct active messages' count against the lane's end: a message is either counted
     * before the lane dies (and then answered or abandoned) or refused, never both or neither.
     */
    private final Object directLock = new Object();
    /** Under directLock: direct active messages queued and not yet answered. */
    private int directUnanswered;
    /** Under directLock: the endpoint gave the lane up while some were unanswered; close after them. */
    private boolean closeWhenAnswered;
    private volatile DirectAnswers answers;
    /** The transport forgets the connection once, whoever gets there first (close, fail, last answer). */
    private final java.util.concurrent.atomic.AtomicBoolean forgotten = new java.util.concurrent.atomic.AtomicBoolean();

    ShmLane(ShmTransport transport, long conn, Inbox peer, int queueDepth, int maxFragment, boolean besideCma) {
        super(ShmTransportProvider.NAME);
        this.types = besideCma ? BESIDE_CMA : ALL;
        this.transport = transport;
        this.conn = conn;
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

    /** The target keeps one window per origin endpoint for all its ring connections. */
    @Override
    public Object exactlyOnceScope() {
        return "shm:" + peer.worker;
    }

    /**
     * A peer process that is gone applies nothing more; a live one (perhaps only stopped) may still
     * take every record left in its inbox.
     */
    @Override
    public dev.fenceline.spi.Revocation revoke() {
        return peer.alive() ? dev.fenceline.spi.Revocation.MAY_STILL_APPLY : dev.fenceline.spi.Revocation.STOPPED;
    }

    @Override
    public void bind(LaneListener l) {
        listen(l);
        if (failure != null && phase() == Phase.FAILED) {
            l.onLaneFailed(failure);
        }
    }

    /** @return whether the lane carries operations (for the transport) */
    boolean isLive() {
        return live();
    }

    // ------------------------------------------------------------------ endpoint side

    @Override
    public PostStatus post(TransportOp op) {
        if (!live()) {
            return PostStatus.IN_PROGRESS; // lost with the lane: its failure report is on the way
        }
        if (op.key() != null && op.kind() != TransportOp.Kind.AM && unanswered.get() == 0) {
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
        if (!live() || unanswered.get() != 0) {
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
            if (!live() || !reserve()) {
                return false;
            }
            ManyToOneRingBuffer ring = peer.ring;
            int at = ring.tryClaim(ShmWire.AM, ShmWire.AM_DATA + payloadBytes);
            if (at < 0) {
                unanswered.decrementAndGet();
                return false; // full: the normal path waits for room
            }
            AtomicBuffer b = ring.buffer();
            long index;
            try {
                b.putLong(at + ShmWire.CONN, conn);
                b.putLong(at + ShmWire.ORIGIN, origin);
                b.putLong(at + ShmWire.SEQ, -1); // no exactly-once number: see abandonDirect()
                b.putLong(at + ShmWire.LOW, -1);
                b.putInt(at + ShmWire.AM_ID, id);
                b.putInt(at + ShmWire.AM_HEADER_LENGTH, h);
                b.putBytes(at + ShmWire.AM_DATA, header, header.position(), h);
                b.putBytes(at + ShmWire.AM_DATA + h, payload, payload.position(), payload.remaining());
            } catch (RuntimeException e) {
                ring.abort(at); // never leave a claimed record behind: it would block the peer's inbox
                unanswered.decrementAndGet();
                throw e;
            }
            // Numbered only now that nothing can stop it, and under the lock its answer takes too:
            // answers come back in this order.
            index = a.queued();
            b.putLong(at + ShmWire.TOKEN, DIRECT | index);
            ring.commit(at);
            directUnanswered++;
            return true;
        }
    }

    /** The transport forgets the connection (and tells the peer); once. */
    void forget() {
        if (forgotten.compareAndSet(false, true)) {
            transport.closed(this);
        }
    }

    /** @return whether direct active messages of this lane wait for answers (even after it was given up) */
    boolean awaitingDirectAnswers() {
        synchronized (directLock) {
            return directUnanswered > 0;
        }
    }

    /** The answer to a direct active message (polling thread), whatever the lane's state. */
    private void directAnswered(long token, FencelineException error) {
        boolean counted;
        boolean close;
        synchronized (directLock) {
            counted = directUnanswered > 0; // not if the lane's end already abandoned it
            if (counted) {
                directUnanswered--;
                unanswered.decrementAndGet();
            }
            close = closeWhenAnswered && directUnanswered == 0;
            if (close) {
                closeWhenAnswered = false;
            }
        }
        if (counted) {
            answers.answered(token & ~DIRECT, error);
        }
        if (close) {
            forget();
        }
    }

    /** The lane died: no answer will come for the direct messages still out. */
    private void abandonDirect(Throwable cause) {
        int n;
        boolean close;
        synchronized (directLock) {
            n = directUnanswered;
            directUnanswered = 0;
            close = closeWhenAnswered;
            closeWhenAnswered = false;
        }
        if (n > 0) {
            answers.abandoned(n, new OutcomeUnknownException("shm: " + n + " active message(s) sent directly on the"
                    + " lane to " + peer.name + " got no answer before it failed (" + cause + "): each may or may"
                    + " not have reached its handler"));
        }
        if (close) {
            forget();
        }
    }

    @Override
    public boolean atomicPostNow(RemoteKey key, long address, dev.fenceline.AtomicOp op, int width, long operand) {
        if (!live() || unanswered.get() != 0) {
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
        if (!live() || unanswered.get() != 0) {
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
        if (!live() || unanswered.get() != 0) {
            return null;
        }
        DataSegment.Peer seg = transport.peerSegment(key);
        if (seg == null) {
            return null;
        }
        return Direct.fetch(seg, key, address, op, width, operand, compare);
    }

    private DataSegment.Peer segment(RemoteKey key) {
        if (segments.containsKey(key)) {
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
        if (!reserve()) {
            return PostStatus.NO_RESOURCE;
        }
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
        ManyToOneRingBuffer ring = peer.ring;
        int at = ring.tryClaim(type, length);
        if (at < 0) {
            unanswered.decrementAndGet();
            wantReady = true; // the peer's ring is full; the polling thread says when it has room
            return PostStatus.NO_RESOURCE;
        }
        try {
            write(op, ring.buffer(), at, payload);
        } catch (RuntimeException e) {
            ring.abort(at); // never leave a claimed record behind: it would block the peer's inbox
            unanswered.decrementAndGet();
            throw e;
        }
        ring.commit(at);
        return PostStatus.IN_PROGRESS;
    }

    private void write(TransportOp op, AtomicBuffer b, int at, int payload) {
        b.putLong(at + ShmWire.CONN, conn);
        b.putLong(at + ShmWire.TOKEN, op.token());
        b.putLong(at + ShmWire.ORIGIN, op.originId());
        b.putLong(at + ShmWire.SEQ, op.sequence());
        b.putLong(at + ShmWire.LOW, op.lowWater());
        long key = op.key() == null ? 0 : op.key().keyId();
        switch (op.kind()) {
            case PUT -> {
                b.putLong(at + ShmWire.BODY, key);
                b.putLong(at + ShmWire.BODY + 8, op.remoteAddress());
                b.putBytes(at + ShmWire.RMA_DATA, op.local(), op.local().position(), payload);
            }
            case GET -> {
                b.putLong(at + ShmWire.BODY, key);
                b.putLong(at + ShmWire.BODY + 8, op.remoteAddress());
                b.putInt(at + ShmWire.GET_LENGTH, payload);
                gets.put(op.token(), op.local());
            }
            case AM -> {
                int h = op.header().remaining();
                b.putInt(at + ShmWire.AM_ID, op.amId());
                b.putInt(at + ShmWire.AM_HEADER_LENGTH, h);
                b.putBytes(at + ShmWire.AM_DATA, op.header(), op.header().position(), h);
                b.putBytes(at + ShmWire.AM_DATA + h, op.local(), op.local().position(), op.local().remaining());
            }
            default -> {
                b.putLong(at + ShmWire.BODY, key);
                b.putLong(at + ShmWire.BODY + 8, op.remoteAddress());
                byte kind = switch (op.kind()) {
                    case ATOMIC_POST -> ShmWire.KIND_POST;
                    case ATOMIC_FETCH -> ShmWire.KIND_FETCH;
                    default -> ShmWire.KIND_CSWAP;
                };
                b.putByte(at + ShmWire.ATOMIC_KIND, kind);
                b.putByte(at + ShmWire.ATOMIC_KIND + 1,
                        kind == ShmWire.KIND_CSWAP ? 0 : WireCodes.atomicCode(op.atomicOp()));
                b.putByte(at + ShmWire.ATOMIC_KIND + 2, (byte) op.width());
                b.putLong(at + ShmWire.ATOMIC_OPERAND, op.operand());
                b.putLong(at + ShmWire.ATOMIC_COMPARE, op.compare());
            }
        }
    }

    /** Counts one more unanswered ring message, or says there is no room. */
    private boolean reserve() {
        if (unanswered.incrementAndGet() <= queueDepth) {
            return true;
        }
        unanswered.decrementAndGet();
        wantReady = true;
        return false;
    }

    @Override
    public PostStatus flush(long token) {
        if (!live()) {
            return PostStatus.IN_PROGRESS;
        }
        if (unanswered.get() == 0) {
            return PostStatus.COMPLETED; // direct accesses are complete on return, ring ones answered
        }
        return probe(token);
    }

    /** Always through the ring: proves the peer's polling thread is alive. */
    @Override
    public PostStatus keepalive(long token) {
        return !live() ? PostStatus.IN_PROGRESS : probe(token);
    }

    private PostStatus probe(long token) {
        if (!reserve()) {
            return PostStatus.NO_RESOURCE;
        }
        int at = peer.ring.tryClaim(ShmWire.FLUSH, 16);
        if (at < 0) {
            unanswered.decrementAndGet();
            wantReady = true;
            return PostStatus.NO_RESOURCE;
        }
        peer.ring.buffer().putLong(at + ShmWire.CONN, conn);
        peer.ring.buffer().putLong(at + ShmWire.TOKEN, token);
        peer.ring.commit(at);
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

    /**
     * The endpoint gave the lane up as failed: direct active messages still out get no answer it
     * would wait for (the next flush reports them), unlike an orderly close, which waits for them.
     */
    @Override
    public void abort(Throwable cause) {
        giveUp();
        abandonDirect(cause);
    }

    private void giveUp() {
        if (end(Phase.CLOSED) != Phase.CLOSED) { // no reply writes into a GET buffer after this returns
            gets.clear();
            boolean close;
            synchronized (directLock) {
                // Direct active messages still out: the peer runs them (they are in its inbox), so
                // keep taking their answers, and close once the last is in.
                close = directUnanswered == 0;
                closeWhenAnswered = !close;
            }
            if (close) {
                forget();
            }
        }
    }

    // ------------------------------------------------------------------ polling thread

    /** A reply for this lane; {@code data} is the GET data (or null). */
    void answered(int type, long token, long value, FencelineException error, AtomicBuffer buffer, int offset,
            int length) {
        if (token < 0) {
            directAnswered(token, type == ShmWire.NACK ? error : null);
            return;
        }
        if (!live()) {
            return;
        }
        LaneListener l = listener();
        unanswered.decrementAndGet();
        if (type == ShmWire.ACK) {
            completed(token, value);
            return;
        }
        reportCompletions(); // completions before any other answer, in the order they came
        switch (type) {
            case ShmWire.FLUSHED -> l.onFlushed(token);
            case ShmWire.NACK -> {
                gets.remove(token);
                l.onFailed(token, error);
            }
            case ShmWire.GET_DATA -> {
                ByteBuffer dst = gets.remove(token);
                if (dst == null) {
                    return;
                }
                if (length != dst.remaining()) {
                    FencelineException bad = new FencelineException("shm: GET_DATA of " + length + " bytes for a get"
                            + " of " + dst.remaining() + " from " + peer.name);
                    whileLive(() -> fail(bad));
                    return;
                }
                if (copyIntoSink(buffer, offset, dst, ShmLane::copyGet)) {
                    l.onCompleted(token, 0);
                }
            }
            default -> l.onCompleted(token, value);
        }
    }

    private static void copyGet(AtomicBuffer from, int offset, ByteBuffer dst) {
        from.getBytes(offset, dst, dst.position(), dst.remaining());
    }

    /** Reports the completions gathered so far (polling thread). */
    void flushBatch() {
        reportCompletions();
    }

    /** After a polling pass: the gathered completions, and room again in the lane and the peer's ring. */
    void pollComplete() {
        reportCompletions();
        if (wantReady && unanswered.get() < queueDepth && peer.ring.size() < peer.ring.capacity() / 2) {
            wantReady = false;
            LaneListener l = listener();
            if (l != null) {
                l.onReady();
            }
        }
    }

    /** The peer process died, or its inbox broke: the lane is dead. */
    void fail(Throwable cause) {
        reportCompletions(); // what completed before the peer died did complete
        boolean failedNow = markFailed();
        abandonDirect(cause); // after the state: a direct message is refused from here on, or swept here
        if (failedNow) {
            failure = cause;
            gets.clear();
            LaneListener l = listener();
            if (l != null) {
                l.onLaneFailed(cause);
            }
        }
    }

    @Override
    public String toString() {
        return "ShmLane[" + id() + " to " + peer.name + ", conn " + Long.toHexString(conn) + "]";
    }
}
