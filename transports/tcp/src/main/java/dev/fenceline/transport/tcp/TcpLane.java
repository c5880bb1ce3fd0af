package dev.fenceline.transport.tcp;

import dev.fenceline.EndpointFailedException;
import dev.fenceline.FencelineException;
import dev.fenceline.LaneType;
import dev.fenceline.spi.DirectPosting;
import dev.fenceline.spi.LaneListener;
import dev.fenceline.spi.PostedOperation;
import dev.fenceline.spi.PostStatus;
import dev.fenceline.spi.Revocation;
import dev.fenceline.spi.LaneCapabilities;
import dev.fenceline.spi.Protocol;
import dev.fenceline.spi.TransportOp;
import dev.fenceline.spi.support.Protocols;
import dev.fenceline.spi.support.AbstractLane;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.buffer.Unpooled;
import io.netty.channel.Channel;
import java.nio.ByteBuffer;
import java.util.EnumSet;
import java.util.Set;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;

/**
 * One authenticated TCP connection used as a lane. The endpoint actor posts (encoding frames and
 * handing them to its {@link FrameWriter}: the event loop writes them in batches, or the actor's
 * thread at once when the lane had nothing else outstanding); the event loop matches
 * replies against the {@link ReplyRing} and tells the listener. Operations are applied at the
 * target in send order, so the lane is ordered and a weak fence costs nothing.
 *
 * <p>Under the endpoint's grant, calling threads post short operations themselves
 * ({@link DirectPosting}): numbered, framed and written on the caller's thread, completed by the
 * event loop that reads the answer. One lock orders every producer (the actor and the posting
 * threads) and the end of the lane against the event loop taking a posted operation's answer, so
 * each posted operation is answered or given back exactly once.
 */
final class TcpLane extends AbstractLane implements DirectPosting {
    private static final Set<LaneType> TYPES = EnumSet.of(LaneType.AM, LaneType.RMA, LaneType.RMA_BW, LaneType.AMO);
    /** Payloads up to this size are copied into the frame rather than sent from the caller's buffer. */
    private static final int COPY_MAX = 1024;
    private final Rail rail;
    private final Channel channel;
    private final TcpSettings settings;
    private final ReplyRing ring;
    private final AtomicLong bytesOutstanding = new AtomicLong();
    private final FrameWriter writer;
    private final AtomicBoolean failureReported = new AtomicBoolean();
    private volatile Throwable failure;
    private volatile boolean wantReady;

    /** Orders the ring's producers, the lane's end, and the taking of a posted operation's answer. */
    private final Object lock = new Object();
    /** Guarded by {@link #lock}: posted operations unanswered, and the lowest number among them. */
    private int postedOut;
    private long postedLow;
    private final boolean directOperations;

    private final int maxFragment;
    private final dev.fenceline.spi.support.ExactlyOnceScope scope;

    /** @param maxFragment the largest payload per operation both ends accept */
    TcpLane(Rail rail, Channel channel, TcpSettings settings, int maxFragment) {
        super(TcpTransportProvider.NAME);
        this.maxFragment = maxFragment;
        this.scope = new dev.fenceline.spi.support.ExactlyOnceScope(rail.peer(), settings.security().tlsOn() ? "tls"
                : dev.fenceline.spi.support.ExactlyOnceWindows.MEMBER);
        this.rail = rail;
        this.channel = channel;
        this.settings = settings;
        this.ring = new ReplyRing(settings.queueDepth());
        // Only where a direct write can be made (epoll, no TLS): the first reference to DirectSocket
        // binds libc, which TcpTransport does up front for those lanes, never on an event loop.
        boolean direct = settings.directWrites() && !settings.security().tlsOn()
                && channel instanceof io.netty.channel.unix.UnixChannel;
        this.writer = new FrameWriter(channel, direct ? DirectSocket.of(channel) : null,
                () -> failed(new EndpointFailedException("tcp: the transport is closed")));
        this.directOperations = settings.directOperations();
        this.capabilities = new LaneCapabilities(Math.min(COPY_MAX, maxFragment), 0, maxFragment, false,
                java.util.Set.of(), java.util.Set.of(), false, true, true);
    }

    /**
     * Puts up to 1 KiB are copied into the frame (short); bigger ones are sent from the caller's
     * buffer (zero-copy, no registration needed). Gets and atomics are requests the target answers.
     */
    @Override
    public LaneCapabilities capabilities() {
        return capabilities;
    }

    private final LaneCapabilities capabilities;

    /** The endpoint's choice, or the lane's own for an operation that carries none. */
    private Protocol protocol(TransportOp op, int payload) {
        Protocol p = op.protocol();
        return p != null ? p : Protocols.rma(payload, capabilities, false);
    }

    /** @return how many frames the endpoint's thread wrote into the socket itself */
    long directFrames() {
        return writer.directFrames();
    }

    /** @return the lane's connection (a fault injected in a test closes it) */
    Channel channel() {
        return channel;
    }

    @Override
    public Set<LaneType> types() {
        return TYPES;
    }

    @Override
    public int maxFragment() {
        return maxFragment;
    }


    @Override
    public boolean deduplicates() {
        return true;
    }

    /**
     * The target applies through its worker's windows, keyed by what this worker proved: under TLS
     * its certificate (shared by every rail, and no other transport's lane), else membership by the
     * secret, as a peer on the target's host proves it: those lanes share the windows.
     */
    @Override
    public Object exactlyOnceScope() {
        return scope;
    }

    /**
     * Frames written to the socket may wait in either kernel's buffers, or in a stopped peer's, and
     * be applied whenever it reads them: nothing written can be taken back. What the endpoint posted
     * after the lane died was never written, and never will be.
     */
    @Override
    public Revocation revoke() {
        synchronized (lock) {
            if (neverWritten == null) {
                return Revocation.MAY_STILL_APPLY;
            }
            java.util.Set<Long> never = java.util.Set.copyOf(neverWritten);
            return token -> never.contains(token) ? Revocation.Fate.REVOKED : Revocation.Fate.MAY_STILL_APPLY;
        }
    }

    /** Operations posted after the lane died, under the lock (made at the first). */
    private java.util.Set<Long> neverWritten;

    @Override
    public void bind(LaneListener l) {
        listen(l);
        if (failure != null) {
            reportFailure(); // it died between the handshake and the endpoint taking it
        }
    }

    // ------------------------------------------------------------------ endpoint side

    private boolean room(int payload) {
        if (ring.size() >= settings.queueDepth()) {
            return false;
        }
        long b = bytesOutstanding.get();
        return b == 0 || b + payload <= settings.window();
    }

    private boolean reserve(int payload) {
        if (room(payload)) {
            return true;
        }
        wantReady = true;
        return room(payload); // re-check: a reply may have raced the flag
    }

    @Override
    public PostStatus post(TransportOp op) {
        int payload = checkedPayload(op);
        synchronized (lock) {
            if (!live()) {
                // Not written: the failure report is on its way (or the endpoint already gave up on
                // this connection), the endpoint restarts it elsewhere, and revoke() says REVOKED.
                if (neverWritten == null) {
                    neverWritten = new java.util.HashSet<>();
                }
                neverWritten.add(op.token());
                return PostStatus.IN_PROGRESS;
            }
            if (!reserve(payload)) {
                return PostStatus.NO_RESOURCE;
            }
            write(op, payload, null);
        }
        return PostStatus.IN_PROGRESS;
    }

    @Override
    public boolean postsDirectly() {
        return directOperations;
    }

    /** Short operations only: a larger payload is the event loop's to stream, in the actor's order. */
    @Override
    public boolean postNow(PostedOperation posted) {
        TransportOp op = posted.op();
        if (op.kind() == TransportOp.Kind.AM || op.local() != null && op.local().remaining() > capabilities.maxShort()) {
            return false; // the actor fragments and streams it
        }
        int payload = checkedPayload(op);
        synchronized (lock) {
            if (!live() || !room(payload)) {
                return false;
            }
            long sn = posted.sequence();
            if (sn < 0) {
                return false; // the grant ended: the caller submits it to the actor
            }
            if (postedOut++ == 0) {
                postedLow = sn;
            }
            // Below the oldest unanswered posted number the target may forget: all answered.
            op.identify(op.originId(), sn, postedLow);
            write(op, payload, posted);
        }
        return true;
    }

    /** Frames one operation and sends it; under {@link #lock}. */
    private void write(TransportOp op, int payload, PostedOperation posted) {
        ByteBufAllocator alloc = channel.alloc();
        long key = op.key() == null ? 0 : op.key().keyId();
        byte mark = posted == null ? 0 : ReplyRing.POSTED;
        switch (op.kind()) {
            case PUT -> {
                ring.offer(op.token(), (byte) (ReplyRing.OP | mark), payload, posted);
                if (protocol(op, payload) == Protocol.SHORT) {
                    enqueue(FrameEncoder.put(alloc, op.token(), op.originId(), op.sequence(), op.lowWater(), key,
                            op.remoteAddress(), op.local()));
                    break;
                }
                enqueue(FrameEncoder.putHeader(alloc, op.token(), op.originId(), op.sequence(), op.lowWater(), key,
                        op.remoteAddress(), payload));
                // The payload is sent from the caller's buffer: the lane may use it until the
                // operation completes, and the target's acknowledgement comes after the bytes.
                enqueue(Unpooled.wrappedBuffer(op.local()));
            }
            case GET -> {
                ring.offer(op.token(), (byte) (ReplyRing.GET | mark), payload, posted != null ? posted : op.local());
                enqueue(FrameEncoder.get(alloc, op.token(), op.originId(), op.sequence(), op.lowWater(), key,
                        op.remoteAddress(), payload));
            }
            case ATOMIC_POST, ATOMIC_FETCH, CSWAP -> {
                byte kind = switch (op.kind()) {
                    case ATOMIC_POST -> Wire.ATOMIC_POST;
                    case ATOMIC_FETCH -> Wire.ATOMIC_FETCH;
                    default -> Wire.ATOMIC_CSWAP;
                };
                ring.offer(op.token(), (byte) (ReplyRing.OP | mark), 0, posted);
                enqueue(FrameEncoder.atomic(alloc, op.token(), op.originId(), op.sequence(), op.lowWater(), key,
                        op.remoteAddress(), kind, op.atomicOp(), op.width(), op.operand(), op.compare()));
            }
            case AM -> {
                ring.offer(op.token(), ReplyRing.OP, payload, null);
                enqueue(FrameEncoder.activeMessageHeader(alloc, op.token(), op.originId(), op.sequence(), op.lowWater(),
                        op.amId(), op.header().remaining(), op.local().remaining()));
                enqueue(Unpooled.wrappedBuffer(op.header()));
                enqueue(Unpooled.wrappedBuffer(op.local()));
            }
        }
        bytesOutstanding.addAndGet(payload);
        // Alone on the lane and small: written at once, on this thread. A large payload is left to
        // the event loop, which copies it into the socket while this thread goes on.
        writer.send(ring.size() == 1 && (payload <= COPY_MAX || op.kind() == TransportOp.Kind.GET));
    }

    @Override
    public PostStatus flush(long token) {
        if (!live()) {
            return PostStatus.IN_PROGRESS; // lost with the lane; the endpoint re-issues it after replay
        }
        if (ring.size() == 0) {
            return PostStatus.COMPLETED; // every operation is acknowledged, so applied at the target
        }
        return probe(token);
    }

    /** Always a round trip: an idle lane must prove the peer is still there. */
    @Override
    public PostStatus keepalive(long token) {
        if (!live()) {
            return PostStatus.IN_PROGRESS;
        }
        return probe(token);
    }

    private PostStatus probe(long token) {
        synchronized (lock) {
            if (!reserve(0)) {
                return PostStatus.NO_RESOURCE;
            }
            ring.offer(token, ReplyRing.FLUSH, 0, null);
            enqueue(FrameEncoder.flush(channel.alloc(), token));
            writer.send(ring.size() == 1);
        }
        return PostStatus.IN_PROGRESS;
    }

    /** The target applies in arrival order: a weak fence has nothing to add. */
    @Override
    public void fence() {
    }

    @Override
    public void close() {
        Phase before;
        synchronized (lock) {
            before = end(Phase.CLOSED); // no GET copies into a user buffer once this returns
            if (before == Phase.LIVE) {
                ring.takePosted(PostedOperation::returned); // written: the endpoint reports their outcome
            }
        }
        rail.stop(this);
        if (before != Phase.CLOSED) {
            channel.close();
        }
    }

    @Override
    public void abort(Throwable cause) {
        // The endpoint restarts this lane's GETs, and what callers posted here, as soon as this returns.
        boolean ended;
        synchronized (lock) {
            ended = end(Phase.ABORTED) == Phase.LIVE;
            if (ended) {
                ring.takePosted(PostedOperation::returned);
            }
        }
        if (ended) {
            channel.close();
            rail.lost(this, listener(), cause);
        }
    }

    private void enqueue(ByteBuf b) {
        writer.enqueue(b);
    }

    // ------------------------------------------------------------------ event-loop side

    /** @return why the reply does not fit, or null after handling it */
    String answered(byte expectedKind, long token, long value, FencelineException error, ByteBuf data) {
        PostedOperation posted;
        byte kind;
        synchronized (lock) { // against the lane's end giving posted operations back
            if (!live()) {
                return null; // the endpoint gave this lane up: late replies are dropped
            }
            if (ring.isEmpty()) {
                return "a reply for token " + token + " with nothing outstanding";
            }
            if (ring.token() != token) {
                return "a reply for token " + token + " while " + ring.token() + " is the oldest outstanding";
            }
            kind = ring.kind();
            boolean fits = error != null ? kind != ReplyRing.FLUSH : kind == expectedKind;
            if (!fits) {
                return "a reply of the wrong kind for token " + token;
            }
            ByteBuffer sink = ring.sink();
            if (data != null && error == null) {
                if (data.readableBytes() != sink.remaining()) {
                    return "GET_DATA of " + data.readableBytes() + " bytes for a get of " + sink.remaining();
                }
                if (!copyIntoSink(data, data.readerIndex(), sink, TcpLane::copyGet)) {
                    return null;
                }
            }
            posted = ring.posted();
            int payload = ring.payload();
            ring.pop();
            bytesOutstanding.addAndGet(-payload);
            if (posted != null) {
                postedOut--;
                postedLow = posted.op().sequence() + 1; // answers come in order: the next one's, or above all
            }
        }
        if (posted != null) {
            if (error == null) {
                posted.completed(value);
            } else {
                posted.failed(error);
            }
            return null;
        }
        if (error == null && kind == ReplyRing.OP) {
            completed(token, value);
            return null;
        }
        reportCompletions(); // completions before any other answer, in the order they came
        LaneListener l = listener();
        if (error != null) {
            l.onFailed(token, error);
        } else if (kind == ReplyRing.FLUSH) {
            l.onFlushed(token);
        } else {
            l.onCompleted(token, value);
        }
        return null;
    }

    private static void copyGet(ByteBuf data, int offset, ByteBuffer sink) {
        data.getBytes(offset, sink.duplicate());
    }

    /** After a read batch: the gathered completions, and room again for a waiting endpoint. */
    void readComplete() {
        reportCompletions();
        if (wantReady && room(0)) {
            wantReady = false;
            LaneListener l = listener();
            if (l != null) {
                l.onReady();
            }
        }
    }

    /** The connection died under the lane (event loop, or a rejected hand-over). */
    void failed(Throwable cause) {
        reportCompletions(); // what completed before the connection died did complete
        writer.release();
        boolean first;
        synchronized (lock) {
            first = markFailed();
            if (first) {
                ring.takePosted(PostedOperation::returned); // before the endpoint hears of the failure
            }
            ring.dropSinks(); // keeps no user buffer alive after the end
        }
        if (first) {
            failure = cause;
            reportFailure();
        }
    }

    private void reportFailure() {
        LaneListener l = listener();
        if (l != null && failureReported.compareAndSet(false, true)) {
            l.onLaneFailed(failure);
            rail.lost(this, l, failure);
        }
    }

    @Override
    public String toString() {
        return "TcpLane[" + id() + ", " + channel.localAddress() + " -> " + channel.remoteAddress() + "]";
    }
}
