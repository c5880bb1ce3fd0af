package dev.fenceline.transport.tcp;

import dev.fenceline.EndpointFailedException;
import dev.fenceline.FencelineException;
import dev.fenceline.LaneType;
import dev.fenceline.spi.support.ConnectionIds;
import dev.fenceline.spi.LaneConnection;
import dev.fenceline.spi.LaneListener;
import dev.fenceline.spi.PostStatus;
import dev.fenceline.spi.TransportOp;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.buffer.Unpooled;
import io.netty.channel.Channel;
import io.netty.util.internal.PlatformDependent;
import java.nio.ByteBuffer;
import java.util.EnumSet;
import java.util.Queue;
import java.util.Set;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;

/**
 * One authenticated TCP connection used as a lane. The endpoint actor posts (encoding frames and
 * handing them to the event loop through a queue, flushed once per batch); the event loop matches
 * replies against the {@link ReplyRing} and tells the listener. Operations are applied at the
 * target in send order, so the lane is ordered and a weak fence costs nothing.
 */
final class TcpLane implements LaneConnection {
    private static final Set<LaneType> TYPES = EnumSet.of(LaneType.AM, LaneType.RMA, LaneType.RMA_BW, LaneType.AMO,
            LaneType.KEEPALIVE);
    /** Payloads up to this size are copied into the frame rather than sent from the caller's buffer. */
    private static final int COPY_MAX = 1024;
    private static final int LIVE = 0;
    private static final int FAILED = 1;
    private static final int ABORTED = 2;
    private static final int CLOSED = 3;

    private final long id = ConnectionIds.next();
    private final Rail rail;
    private final Channel channel;
    private final TcpSettings settings;
    private final ReplyRing ring;
    private final AtomicLong bytesOutstanding = new AtomicLong();
    private final Queue<ByteBuf> outbound = PlatformDependent.newSpscQueue();
    private final AtomicBoolean drainScheduled = new AtomicBoolean();
    private final Runnable drain = this::drain;
    private final AtomicInteger state = new AtomicInteger(LIVE);
    private final AtomicBoolean failureReported = new AtomicBoolean();
    /**
     * Held while a GET's data is copied into the user's buffer, and while the endpoint takes the
     * lane away (abort, close): after that the endpoint may restart the GET elsewhere and hand the
     * buffer back to the user, so no late reply may write into it.
     */
    private final Object sinkLock = new Object();
    private volatile LaneListener listener;
    private volatile Throwable failure;
    private volatile boolean wantReady;
    /** Event loop only: completions gathered during one read batch, reported in one message. */
    private final long[] batchTokens = new long[256];
    private final long[] batchValues = new long[256];
    private int batched;

    private final int maxFragment;

    /** @param maxFragment the largest payload per operation both ends accept */
    TcpLane(Rail rail, Channel channel, TcpSettings settings, int maxFragment) {
        this.maxFragment = maxFragment;
        this.rail = rail;
        this.channel = channel;
        this.settings = settings;
        this.ring = new ReplyRing(settings.queueDepth());
    }

    @Override
    public long id() {
        return id;
    }

    @Override
    public String transport() {
        return TcpTransportProvider.NAME;
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
    public boolean ordered() {
        return true;
    }

    @Override
    public boolean deduplicates() {
        return true;
    }

    @Override
    public void bind(LaneListener l) {
        this.listener = l;
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
        if (state.get() != LIVE) {
            // Like a write into a dead socket: lost. The failure report is on its way (or the
            // endpoint already gave up on this connection), and the endpoint restarts it elsewhere.
            return PostStatus.IN_PROGRESS;
        }
        int payload = switch (op.kind()) {
            case PUT, GET -> op.local().remaining();
            case AM -> op.header().remaining() + op.local().remaining();
            default -> 0;
        };
        if (payload > maxFragment) {
            throw new FencelineException("tcp: " + op.kind() + " of " + payload + " bytes exceeds the lane's limit of "
                    + maxFragment + " (" + TcpSettings.SECTION + ".max-fragment, the smaller of both ends')");
        }
        if (!reserve(payload)) {
            return PostStatus.NO_RESOURCE;
        }
        ByteBufAllocator alloc = channel.alloc();
        long key = op.key() == null ? 0 : op.key().keyId();
        switch (op.kind()) {
            case PUT -> {
                ring.offer(op.token(), ReplyRing.OP, payload, null);
                if (payload <= COPY_MAX) {
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
                ring.offer(op.token(), ReplyRing.GET, payload, op.local());
                enqueue(FrameEncoder.get(alloc, op.token(), op.originId(), op.sequence(), op.lowWater(), key,
                        op.remoteAddress(), payload));
            }
            case ATOMIC_POST, ATOMIC_FETCH, CSWAP -> {
                byte kind = switch (op.kind()) {
                    case ATOMIC_POST -> Wire.ATOMIC_POST;
                    case ATOMIC_FETCH -> Wire.ATOMIC_FETCH;
                    default -> Wire.ATOMIC_CSWAP;
                };
                ring.offer(op.token(), ReplyRing.OP, 0, null);
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
        schedule();
        return PostStatus.IN_PROGRESS;
    }

    @Override
    public PostStatus flush(long token) {
        if (state.get() != LIVE) {
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
        if (state.get() != LIVE) {
            return PostStatus.IN_PROGRESS;
        }
        return probe(token);
    }

    private PostStatus probe(long token) {
        if (!reserve(0)) {
            return PostStatus.NO_RESOURCE;
        }
        ring.offer(token, ReplyRing.FLUSH, 0, null);
        enqueue(FrameEncoder.flush(channel.alloc(), token));
        schedule();
        return PostStatus.IN_PROGRESS;
    }

    /** The target applies in arrival order: a weak fence has nothing to add. */
    @Override
    public void fence() {
    }

    @Override
    public void close() {
        int s;
        synchronized (sinkLock) { // no GET copies into a user buffer once this returns
            s = state.getAndSet(CLOSED);
        }
        rail.stop(this);
        if (s != CLOSED) {
            channel.close();
        }
    }

    @Override
    public void abort(Throwable cause) {
        boolean aborted;
        synchronized (sinkLock) { // the endpoint restarts this lane's GETs as soon as this returns
            aborted = state.compareAndSet(LIVE, ABORTED);
        }
        if (aborted) {
            channel.close();
            rail.lost(this, listener, cause);
        }
    }

    private void enqueue(ByteBuf b) {
        outbound.offer(b);
    }

    private void schedule() {
        if (drainScheduled.compareAndSet(false, true)) {
            try {
                channel.eventLoop().execute(drain);
            } catch (RejectedExecutionException shutDown) {
                drainScheduled.set(false);
                releaseOutbound();
                failed(new EndpointFailedException("tcp: the transport is closed"));
            }
        }
    }

    /** Event loop: writes everything queued, then one flush (one syscall for the batch). */
    private void drain() {
        drainScheduled.set(false);
        if (!channel.isActive()) {
            releaseOutbound();
            return;
        }
        ByteBuf b;
        boolean wrote = false;
        while ((b = outbound.poll()) != null) {
            channel.write(b, channel.voidPromise());
            wrote = true;
        }
        if (wrote) {
            channel.flush();
        }
    }

    private void releaseOutbound() {
        ByteBuf b;
        while ((b = outbound.poll()) != null) {
            b.release();
        }
    }

    // ------------------------------------------------------------------ event-loop side

    /** @return why the reply does not fit, or null after handling it */
    String answered(byte expectedKind, long token, long value, FencelineException error, ByteBuf data) {
        if (state.get() != LIVE) {
            return null; // the endpoint gave this lane up: late replies are dropped
        }
        if (ring.isEmpty()) {
            return "a reply for token " + token + " with nothing outstanding";
        }
        if (ring.token() != token) {
            return "a reply for token " + token + " while " + ring.token() + " is the oldest outstanding";
        }
        byte kind = ring.kind();
        boolean fits = error != null ? kind != ReplyRing.FLUSH : kind == expectedKind;
        if (!fits) {
            return "a reply of the wrong kind for token " + token;
        }
        ByteBuffer sink = ring.sink();
        if (data != null && error == null) {
            if (data.readableBytes() != sink.remaining()) {
                return "GET_DATA of " + data.readableBytes() + " bytes for a get of " + sink.remaining();
            }
            synchronized (sinkLock) {
                if (state.get() != LIVE) {
                    return null;
                }
                data.getBytes(data.readerIndex(), sink.duplicate());
            }
        }
        int payload = ring.payload();
        ring.pop();
        bytesOutstanding.addAndGet(-payload);
        LaneListener l = listener;
        if (error == null && kind == ReplyRing.OP) {
            batchTokens[batched] = token;
            batchValues[batched] = value;
            if (++batched == batchTokens.length) {
                flushBatch();
            }
            return null;
        }
        flushBatch(); // completions before any other answer, in the order they came
        if (error != null) {
            l.onFailed(token, error);
        } else if (kind == ReplyRing.FLUSH) {
            l.onFlushed(token);
        } else {
            l.onCompleted(token, value);
        }
        return null;
    }

    /** Reports the completions gathered so far (event loop). */
    private void flushBatch() {
        if (batched > 0) {
            int n = batched;
            batched = 0;
            LaneListener l = listener;
            if (l != null && state.get() == LIVE) {
                l.onCompletedBatch(batchTokens, batchValues, n);
            }
        }
    }

    /** After a read batch: the gathered completions, and room again for a waiting endpoint. */
    void readComplete() {
        flushBatch();
        if (wantReady && room(0)) {
            wantReady = false;
            LaneListener l = listener;
            if (l != null) {
                l.onReady();
            }
        }
    }

    /** The connection died under the lane (event loop, or a rejected hand-over). */
    void failed(Throwable cause) {
        flushBatch(); // what completed before the connection died did complete
        releaseOutbound();
        ring.dropSinks(); // event loop: the consumer; keeps no user buffer alive after the end
        if (state.compareAndSet(LIVE, FAILED)) {
            failure = cause;
            reportFailure();
        }
    }

    private void reportFailure() {
        LaneListener l = listener;
        if (l != null && failureReported.compareAndSet(false, true)) {
            l.onLaneFailed(failure);
            rail.lost(this, l, failure);
        }
    }

    @Override
    public String toString() {
        return "TcpLane[" + id + ", " + channel.localAddress() + " -> " + channel.remoteAddress() + "]";
    }
}
