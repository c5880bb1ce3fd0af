package dev.fenceline.transport.ucx;

import dev.fenceline.AtomicOp;
import dev.fenceline.RemoteKey;
import dev.fenceline.spi.TransportOp;
import java.nio.ByteBuffer;

/**
 * One operation of a lane on its way through the progress agent: the fields of the endpoint's
 * {@link TransportOp}, copied at post (a lane reads the endpoint's op only during the call), and
 * where it stands. Its state changes under the lane's lock ({@link UcxLane#ledger}), so the lane's
 * revocation knows exactly which operations the agent handed to UCT.
 */
final class UcxOp implements UcxCommand {
    /** Where an operation stands. */
    enum State {
        /** Queued for the agent; nothing of it reached UCT. */
        QUEUED,
        /** Sent as a software request; the target answers. */
        SENT,
        /** Handed to UCT's hardware path and not yet complete (zero-copy in flight). */
        POSTED,
        /** The lane was given up before the agent took it: never sent. */
        WITHDRAWN
    }

    /**
     * What the operation is; a flush or keepalive probe is an operation of the lane too, and so is
     * asking the target for the answers it holds back ({@link UcxWire#EXPEDITE}), which has none.
     */
    enum Kind {
        PUT, GET, ATOMIC_POST, ATOMIC_FETCH, CSWAP, MESSAGE, FLUSH, KEEPALIVE, EXPEDITE
    }

    final UcxLane lane;
    final Kind kind;
    final long token;
    final long remoteAddress;
    final RemoteKey key;
    /**
     * Put source, get destination (the endpoint's buffer, valid until the answer), message payload
     * (a copy, or a direct message's sender's own, valid only until it returns: see {@link #ownBytes}).
     */
    ByteBuffer local;
    final AtomicOp atomicOp;
    final int width;
    final long operand;
    final long compare;
    final int amId;
    /** A message's header; replaced only by {@link #ownBytes}. */
    ByteBuffer header;
    final long origin;
    final long sequence;
    final long lowWater;
    /** The memory handle of the local buffer's registration with this lane's memory domain, or 0. */
    final long localMemoryHandle;
    /** Under the lane's lock. */
    State state = State.QUEUED;
    /** Progress agent: of a message sent in parts, the bytes (header and payload) already sent. */
    int partSent;
    /** Progress agent: the direct buffer standing in for a heap {@link #local} while UCT uses it, or null. */
    ByteBuffer bounce;
    /** Where the answer goes when a calling thread posted it ({@link UcxLane#postNow}); null for the endpoint actor's. */
    final dev.fenceline.spi.PostedOperation posted;

    private UcxOp(UcxLane lane, Kind kind, long token, long remoteAddress, RemoteKey key, ByteBuffer local,
            AtomicOp atomicOp, int width, long operand, long compare, int amId, ByteBuffer header, long origin,
            long sequence, long lowWater, long localMemoryHandle, dev.fenceline.spi.PostedOperation posted) {
        this.lane = lane;
        this.posted = posted;
        this.kind = kind;
        this.token = token;
        this.remoteAddress = remoteAddress;
        this.key = key;
        this.local = local;
        this.atomicOp = atomicOp;
        this.width = width;
        this.operand = operand;
        this.compare = compare;
        this.amId = amId;
        this.header = header;
        this.origin = origin;
        this.sequence = sequence;
        this.lowWater = lowWater;
        this.localMemoryHandle = localMemoryHandle;
    }

    /**
     * @param lane the lane
     * @param op the endpoint's operation
     * @param memh the local buffer's UCT memory handle, or 0
     * @return its copy
     */
    static UcxOp of(UcxLane lane, TransportOp op, long memh) {
        return of(lane, op, op.token(), memh, null);
    }

    private static UcxOp of(UcxLane lane, TransportOp op, long token, long memh,
            dev.fenceline.spi.PostedOperation posted) {
        Kind kind = switch (op.kind()) {
            case PUT -> Kind.PUT;
            case GET -> Kind.GET;
            case ATOMIC_POST -> Kind.ATOMIC_POST;
            case ATOMIC_FETCH -> Kind.ATOMIC_FETCH;
            case CSWAP -> Kind.CSWAP;
            case AM -> Kind.MESSAGE;
        };
        UcxOp u = new UcxOp(lane, kind, token, op.remoteAddress(), op.key(), op.local(), op.atomicOp(), op.width(),
                op.operand(), op.compare(), op.amId(), op.header(), op.originId(), op.sequence(), op.lowWater(), memh,
                posted);
        u.softwareOnly = op.mayHaveApplied();
        return u;
    }

    /**
     * An earlier copy may have been applied ({@link TransportOp#mayHaveApplied()}): sent as a software
     * request, which the target's window recognizes, never through the hardware. Set once, before
     * the agent sees it.
     */
    boolean softwareOnly;

    /**
     * A weak fence came before it ({@link UcxLane#fence}): where UCT's completions are not in place,
     * UCT fences the lane's hardware operations before it. Set once, before the agent sees it.
     */
    boolean fencedBefore;

    /**
     * Nobody waits for its own answer (a direct message: only a flush reads it), so the target may
     * hold it back to send several together ({@link UcxWire#ANSWER_MAY_WAIT}).
     */
    boolean answerMayWait;

    /**
     * An operation a calling thread posted under the endpoint's grant (numbered and identified
     * already), sent as a software request under a token of the lane's own.
     *
     * @param lane the lane
     * @param token {@link UcxLane#POSTED} | the lane's count
     * @param posted the operation and where its answer goes
     * @return its copy
     */
    static UcxOp posted(UcxLane lane, long token, dev.fenceline.spi.PostedOperation posted) {
        return of(lane, posted.op(), token, 0, posted);
    }

    /**
     * An active message sent on the fast path ({@link UcxLane#activeMessageNow}): its header and payload
     * copied (the caller may reuse its buffers) or, sent at once on the agent's thread, the caller's
     * own until {@link #ownBytes}; no exactly-once number (it is never sent again), its
     * token the sign bit and the endpoint's index for it.
     *
     * @param lane the lane
     * @param token {@link UcxLane#DIRECT} | the index
     * @param amId the handler id
     * @param header the header: a copy, or the caller's own until {@link #ownBytes}
     * @param payload the payload: a copy, or the caller's own until {@link #ownBytes}
     * @param origin the endpoint's id
     * @param answerMayWait whether the target may hold its answer back
     * @return the message
     */
    static UcxOp direct(UcxLane lane, long token, int amId, ByteBuffer header, ByteBuffer payload, long origin,
            boolean answerMayWait) {
        UcxOp op = new UcxOp(lane, Kind.MESSAGE, token, 0, null, payload, null, 0, 0, 0, amId, header, origin, -1, -1,
                0, null);
        op.answerMayWait = answerMayWait;
        return op;
    }

    /**
     * @param lane the lane
     * @return a request that the target send the answers it holds for the lane now (a flush waits)
     */
    static UcxOp expedite(UcxLane lane) {
        return new UcxOp(lane, Kind.EXPEDITE, 0, 0, null, null, null, 0, 0, 0, 0, null, 0, -1, -1, 0, null);
    }

    /**
     * A direct message made over its sender's buffers (a handler answering on the agent's thread,
     * sent at once) and not sent after all keeps copies of its bytes: its sender reuses them once
     * it returns. Under the lane's lock, on the agent's thread.
     */
    void ownBytes() {
        if (state != State.SENT) {
            header = copy(header);
            local = copy(local);
        }
    }

    /** What an empty message part is copied to: nothing to copy, and nothing to allocate. */
    private static final ByteBuffer EMPTY = ByteBuffer.allocate(0).asReadOnlyBuffer();

    /**
     * @return a heap copy of {@code b}'s bytes from position to limit ({@code b} is not moved),
     *     read-only where empty (shared)
     */
    static ByteBuffer copy(ByteBuffer b) {
        int n = b.remaining();
        if (n == 0) {
            return EMPTY;
        }
        return ByteBuffer.allocate(n).put(0, b, b.position(), n); // absolute: no view of b to move
    }

    /** @return whether it is an active message sent on the fast path (answered to the endpoint's direct ledger) */
    boolean isDirect() {
        return token < 0;
    }

    /**
     * @param lane the lane
     * @param token the flush's token
     * @param keepalive whether it is a keepalive probe (it goes to the target even with nothing
     *     outstanding: an answer proves the peer serves)
     * @return the flush
     */
    static UcxOp flush(UcxLane lane, long token, boolean keepalive) {
        return new UcxOp(lane, keepalive ? Kind.KEEPALIVE : Kind.FLUSH, token, 0, null, null, null, 0, 0, 0, 0, null, 0,
                -1, -1, 0, null);
    }

    boolean isFlush() {
        return kind == Kind.FLUSH || kind == Kind.KEEPALIVE;
    }

    /** @return the payload bytes it moves */
    int payload() {
        return switch (kind) {
            case PUT, GET -> local.remaining();
            case MESSAGE -> header.remaining() + local.remaining();
            default -> 0;
        };
    }

    @Override
    public String toString() {
        return kind + " " + token + " on " + lane;
    }
}
