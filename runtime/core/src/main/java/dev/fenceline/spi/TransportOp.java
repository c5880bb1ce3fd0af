package dev.fenceline.spi;

import dev.fenceline.AtomicOp;
import dev.fenceline.RemoteKey;
import java.nio.ByteBuffer;

/**
 * One operation handed to a lane. Built by the endpoint; a lane reads it during
 * {@link LaneConnection#post(TransportOp)} and may keep it until it reports the completion.
 */
public final class TransportOp {
    /** What the operation does at the target. */
    public enum Kind {
        /** Write {@link #local()} at the remote address. */
        PUT,
        /** Read into {@link #local()} from the remote address. */
        GET,
        /** Apply an atomic, no result. */
        ATOMIC_POST,
        /** Apply an atomic and return the old value. */
        ATOMIC_FETCH,
        /** Compare-and-swap, returning the old value. */
        CSWAP,
        /** Deliver an active message. */
        AM
    }

    private final Kind kind;
    private final long token;
    private final long remoteAddress;
    private final RemoteKey key;
    private final ByteBuffer local;
    private final AtomicOp atomicOp;
    private final int width;
    private final long operand;
    private final long compare;
    private final int amId;
    private final ByteBuffer header;
    private long originId;
    private long sequence = -1;
    private long lowWater = -1;
    private long result;
    private RequestTrace trace;
    private Protocol protocol;
    private boolean mayHaveApplied;
    private RegionHandle localHandle;

    private TransportOp(Kind kind, long token, long remoteAddress, RemoteKey key, ByteBuffer local, AtomicOp atomicOp,
            int width, long operand, long compare, int amId, ByteBuffer header) {
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
    }

    /**
     * @param kind PUT or GET
     * @param token echoed in the completion
     * @param remoteAddress first remote byte
     * @param key the region's key
     * @param local the source (put) or destination (get), position to limit
     * @return the operation
     */
    public static TransportOp rma(Kind kind, long token, long remoteAddress, RemoteKey key, ByteBuffer local) {
        return new TransportOp(kind, token, remoteAddress, key, local, null, 0, 0, 0, 0, null);
    }

    /**
     * @param kind ATOMIC_POST, ATOMIC_FETCH or CSWAP
     * @param token echoed in the completion
     * @param remoteAddress the aligned remote address
     * @param key the region's key
     * @param op the atomic (ignored for CSWAP)
     * @param width 4 or 8
     * @param operand operand, or the desired value for CSWAP
     * @param compare the expected value for CSWAP
     * @return the operation
     */
    public static TransportOp atomic(Kind kind, long token, long remoteAddress, RemoteKey key, AtomicOp op, int width,
            long operand, long compare) {
        return new TransportOp(kind, token, remoteAddress, key, null, op, width, operand, compare, 0, null);
    }

    /**
     * @param token echoed in the completion
     * @param amId the handler id at the target
     * @param header the header, position to limit
     * @param payload the payload, position to limit
     * @return the operation
     */
    public static TransportOp activeMessage(long token, int amId, ByteBuffer header, ByteBuffer payload) {
        return new TransportOp(Kind.AM, token, 0, null, payload, null, 0, 0, 0, amId, header);
    }

    /** @return what the operation does */
    public Kind kind() {
        return kind;
    }

    /** @return the token echoed in completions */
    public long token() {
        return token;
    }

    /** @return the remote address */
    public long remoteAddress() {
        return remoteAddress;
    }

    /** @return the region's key, or null for active messages */
    public RemoteKey key() {
        return key;
    }

    /** @return the local buffer (put source, get destination, AM payload) */
    public ByteBuffer local() {
        return local;
    }

    /** @return the atomic operation */
    public AtomicOp atomicOp() {
        return atomicOp;
    }

    /** @return the atomic's width in bytes */
    public int width() {
        return width;
    }

    /** @return the atomic operand (CSWAP: the desired value) */
    public long operand() {
        return operand;
    }

    /** @return CSWAP's expected value */
    public long compare() {
        return compare;
    }

    /** @return the active-message id */
    public int amId() {
        return amId;
    }

    /** @return the active-message header */
    public ByteBuffer header() {
        return header;
    }

    /**
     * Identifies the operation for exactly-once delivery: a re-sent operation carries the same pair.
     *
     * @param origin the origin endpoint's id
     * @param seq the operation's sequence number on that endpoint, kept across restarts
     * @param low the endpoint's low-water mark when it posts this: the smallest sequence number it
     *     has not seen complete; nothing below it will ever be sent again
     * @return this
     */
    public TransportOp identify(long origin, long seq, long low) {
        this.originId = origin;
        this.sequence = seq;
        this.lowWater = low;
        return this;
    }

    /** @return the origin's low-water mark (see {@link dev.fenceline.spi.support.DedupWindow}), or -1 */
    public long lowWater() {
        return lowWater;
    }

    /** @return the origin endpoint's id (software protocols deduplicate by it) */
    public long originId() {
        return originId;
    }

    /** @return the operation's sequence number on its origin endpoint, or -1 */
    public long sequence() {
        return sequence;
    }

    /** @return the observer of the request this operation belongs to, or null (almost always) */
    public RequestTrace trace() {
        return trace;
    }

    /**
     * @param t the observer of the request this operation belongs to
     * @return this
     */
    public TransportOp trace(RequestTrace t) {
        this.trace = t;
        return this;
    }

    /**
     * @return how the endpoint chose to send it, from the lane's {@link LaneCapabilities} (null if
     *     the endpoint did not say: a transport then chooses with
     *     {@link dev.fenceline.spi.support.Protocols#choose} itself)
     */
    public Protocol protocol() {
        return protocol;
    }

    /**
     * @param p the protocol the endpoint chose
     * @return this
     */
    public TransportOp protocol(Protocol p) {
        this.protocol = p;
        return this;
    }

    /**
     * @return whether an earlier copy of this operation, sent on a lane the endpoint gave up, may
     *     have been applied or may still be: then a lane that {@link LaneConnection#deduplicates()}
     *     must carry it where its target's exactly-once window sees it (a request the target
     *     applies), never apply it past the window (a store into mapped memory, a hardware RMA),
     *     or the first copy and this one may both apply
     */
    public boolean mayHaveApplied() {
        return mayHaveApplied;
    }

    /**
     * @param copy whether an earlier copy may have been applied, or may still be
     * @return this
     */
    public TransportOp mayHaveApplied(boolean copy) {
        this.mayHaveApplied = copy;
        return this;
    }

    /**
     * @return the lane's transport's handle of the registered region that holds {@link #local()},
     *     for zero-copy from registered memory; set only for a lane whose zero-copy needs it
     *     ({@link LaneCapabilities#zcopyNeedsRegisteredLocal()}), and null if the buffer is not in
     *     a region registered with that transport
     */
    public RegionHandle localHandle() {
        return localHandle;
    }

    /**
     * @param h the handle, or null
     * @return this
     */
    public TransportOp localHandle(RegionHandle h) {
        this.localHandle = h;
        return this;
    }

    /** @return the fetched value of an operation that returned {@link PostStatus#COMPLETED} */
    public long result() {
        return result;
    }

    /** @param value the fetched value, set by a lane that completes the operation synchronously */
    public void result(long value) {
        this.result = value;
    }

    /** @return the number of payload bytes this operation moves */
    public long bytes() {
        return switch (kind) {
            case PUT, GET -> local.remaining();
            case AM -> local.remaining() + header.remaining();
            default -> width;
        };
    }
}
