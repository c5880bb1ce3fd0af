package dev.fenceline.transport.tcp;

import dev.fenceline.AtomicOp;
import dev.fenceline.FencelineException;
import dev.fenceline.OutcomeUnknownException;
import dev.fenceline.spi.DedupWindow;
import dev.fenceline.spi.RemoteAccessTarget;
import io.netty.buffer.ByteBuf;
import io.netty.channel.ChannelFutureListener;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.util.concurrent.ScheduledFuture;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The target side of one incoming connection: authenticates the peer, then applies its operations
 * to this worker's memory in arrival order, at most once per (origin endpoint, sequence), and
 * answers each in the same order. Replies are flushed once per read batch. Runs on the channel's
 * event loop only.
 */
final class TargetHandler extends ChannelInboundHandlerAdapter implements FrameHandler {
    private static final Logger LOG = LoggerFactory.getLogger(TargetHandler.class);

    private enum State { AWAIT_HELLO, AWAIT_AUTH, READY, CLOSED }

    private final TcpTransport transport;
    private ChannelHandlerContext ctx;
    private State state = State.AWAIT_HELLO;
    private ScheduledFuture<?> handshakeTimeout;
    private UUID peer;
    private int version;
    private byte[] clientNonce;
    private byte[] serverNonce;
    private TargetDedup.Origin origin;

    TargetHandler(TcpTransport transport) {
        this.transport = transport;
    }

    @Override
    public void channelActive(ChannelHandlerContext c) {
        this.ctx = c;
        handshakeTimeout = c.executor().schedule(() -> {
            if (state != State.READY && state != State.CLOSED) {
                LOG.warn("tcp {}: closing connection from {}: no authenticated hello within {}", transport.workerName(),
                        c.channel().remoteAddress(), transport.settings().connectTimeout());
                c.close();
            }
        }, transport.settings().connectTimeout().toNanos(), TimeUnit.NANOSECONDS);
        c.fireChannelActive();
    }

    @Override
    public void channelRead(ChannelHandlerContext c, Object msg) {
        ByteBuf frame = (ByteBuf) msg;
        try {
            if (state != State.CLOSED) {
                FrameDecoder.decode(frame, this, transport.settings().maxFragment());
            }
        } catch (MalformedFrameException e) {
            LOG.warn("tcp {}: closing connection from {}: {}", transport.workerName(), c.channel().remoteAddress(),
                    e.getMessage());
            closeNow();
        } finally {
            frame.release();
        }
    }

    @Override
    public void channelReadComplete(ChannelHandlerContext c) {
        c.flush();
    }

    @Override
    public void exceptionCaught(ChannelHandlerContext c, Throwable cause) {
        // A frame over the size limit (TooLongFrameException), a reset, a timeout: that connection ends.
        LOG.warn("tcp {}: closing connection from {}: {}", transport.workerName(), c.channel().remoteAddress(),
                cause.toString());
        closeNow();
    }

    @Override
    public void channelInactive(ChannelHandlerContext c) {
        state = State.CLOSED;
        if (handshakeTimeout != null) {
            handshakeTimeout.cancel(false);
        }
        if (origin != null) {
            transport.dedup().release(origin, c.executor());
            origin = null;
        }
        c.fireChannelInactive();
    }

    private void closeNow() {
        state = State.CLOSED;
        ctx.close();
    }

    private void sendRefusal(String reason) {
        state = State.CLOSED;
        ctx.writeAndFlush(FrameEncoder.refuse(ctx.alloc(), reason)).addListener(ChannelFutureListener.CLOSE);
    }

    // ------------------------------------------------------------------ handshake

    @Override
    public void hello(int min, int max, UUID client, UUID server, byte[] nonce) throws MalformedFrameException {
        if (state != State.AWAIT_HELLO) {
            throw new MalformedFrameException("HELLO in state " + state);
        }
        if (min > Wire.VERSION || max < Wire.VERSION) {
            LOG.warn("tcp {}: refused {}: it speaks protocol versions {}..{}, this worker {}", transport.workerName(),
                    ctx.channel().remoteAddress(), min, max, Wire.VERSION);
            sendRefusal("no common protocol version: you speak " + min + ".." + max + ", this worker " + Wire.VERSION);
            return;
        }
        if (!server.equals(transport.workerId())) {
            LOG.warn("tcp {}: refused {}: it asked for worker {}", transport.workerName(), ctx.channel().remoteAddress(),
                    server);
            sendRefusal("no worker " + server + " here");
            return;
        }
        version = Wire.VERSION;
        peer = client;
        clientNonce = nonce;
        serverNonce = Handshake.nonce();
        byte[] proof = transport.handshake().serverProof(version, client, server, clientNonce, serverNonce);
        state = State.AWAIT_AUTH;
        ctx.writeAndFlush(FrameEncoder.challenge(ctx.alloc(), version, serverNonce, proof));
    }

    @Override
    public void auth(byte[] proof) throws MalformedFrameException {
        if (state != State.AWAIT_AUTH) {
            throw new MalformedFrameException("AUTH in state " + state);
        }
        byte[] expected = transport.handshake().clientProof(version, peer, transport.workerId(), clientNonce,
                serverNonce);
        if (!Handshake.matches(expected, proof)) {
            LOG.warn("tcp {}: refused {} (claims worker {}): authentication failed (wrong secret?)",
                    transport.workerName(), ctx.channel().remoteAddress(), peer);
            sendRefusal("authentication failed");
            return;
        }
        state = State.READY;
        handshakeTimeout.cancel(false);
        LOG.debug("tcp {}: accepted {} from worker {}", transport.workerName(), ctx.channel().remoteAddress(), peer);
        ctx.writeAndFlush(FrameEncoder.welcome(ctx.alloc()));
    }

    // ------------------------------------------------------------------ operations

    private RemoteAccessTarget ready() throws MalformedFrameException {
        if (state != State.READY) {
            throw new MalformedFrameException("operation before authentication");
        }
        return transport.target();
    }

    /** The dedup window of {@code id}; a connection carries one endpoint's operations. */
    private DedupWindow window(long id) {
        if (origin == null || origin.id != id) {
            if (origin != null) {
                transport.dedup().release(origin, ctx.executor());
            }
            origin = transport.dedup().retain(id);
        }
        return origin.window;
    }

    /** Answers a re-sent operation with its first result; returns false if the caller must apply it. */
    private boolean answeredBefore(long token, long originId, long seq, DedupWindow w) {
        switch (w.lookup(seq)) {
            case DUPLICATE -> {
                ctx.write(FrameEncoder.ack(ctx.alloc(), token, w.result(seq)));
                return true;
            }
            case TOO_OLD -> {
                nack(token, new OutcomeUnknownException("tcp: operation " + seq + " of endpoint "
                        + Long.toHexString(originId) + " is older than the dedup window of "
                        + transport.settings().dedupWindow() + " at worker '" + transport.workerName()
                        + "'; it is not applied again"));
                return true;
            }
            default -> {
                return false;
            }
        }
    }

    private void nack(long token, FencelineException e) {
        ctx.write(FrameEncoder.nack(ctx.alloc(), token, WireErrors.code(e), WireErrors.reason(e),
                String.valueOf(e.getMessage())));
    }

    @Override
    public void put(long token, long originId, long seq, long key, long address, ByteBuf data)
            throws MalformedFrameException {
        RemoteAccessTarget t = ready();
        if (seq < 0) {
            applyPut(t, token, key, address, data);
            return;
        }
        DedupWindow w = window(originId);
        synchronized (w) {
            if (!answeredBefore(token, originId, seq, w) && applyPut(t, token, key, address, data)) {
                w.record(seq, 0);
            }
        }
    }

    private boolean applyPut(RemoteAccessTarget t, long token, long key, long address, ByteBuf data) {
        try {
            t.put(key, address, data.nioBuffer());
        } catch (FencelineException e) {
            nack(token, e);
            return false;
        }
        ctx.write(FrameEncoder.ack(ctx.alloc(), token, 0));
        return true;
    }

    @Override
    public void get(long token, long originId, long seq, long key, long address, int length)
            throws MalformedFrameException {
        RemoteAccessTarget t = ready();
        // A read has no effect, so a re-sent one is simply read again (at its place in the order).
        ByteBuf header = FrameEncoder.getDataHeader(ctx.alloc(), token, length);
        ByteBuf data = ctx.alloc().directBuffer(length, length);
        try {
            t.get(key, address, data.nioBuffer(0, length));
        } catch (FencelineException e) {
            header.release();
            data.release();
            nack(token, e);
            return;
        }
        data.writerIndex(length);
        ctx.write(header);
        ctx.write(data);
    }

    @Override
    public void atomic(long token, long originId, long seq, long key, long address, int kind, AtomicOp op, int width,
            long operand, long compare) throws MalformedFrameException {
        RemoteAccessTarget t = ready();
        if (seq < 0) {
            applyAtomic(t, token, key, address, kind, op, width, operand, compare);
            return;
        }
        DedupWindow w = window(originId);
        synchronized (w) {
            if (!answeredBefore(token, originId, seq, w)) {
                if (applyAtomic(t, token, key, address, kind, op, width, operand, compare)) {
                    w.record(seq, lastValue);
                }
            }
        }
    }

    /** The value the last successful {@link #applyAtomic} fetched; saves boxing it per operation. */
    private long lastValue;

    private boolean applyAtomic(RemoteAccessTarget t, long token, long key, long address, int kind, AtomicOp op,
            int width, long operand, long compare) {
        long v;
        try {
            v = kind == Wire.ATOMIC_CSWAP ? t.compareAndSwap(key, address, width, compare, operand)
                    : t.atomic(key, address, width, op, operand);
        } catch (FencelineException e) {
            nack(token, e);
            return false;
        }
        lastValue = v;
        ctx.write(FrameEncoder.ack(ctx.alloc(), token, v));
        return true;
    }

    @Override
    public void activeMessage(long token, long originId, long seq, int id, ByteBuf header, ByteBuf payload)
            throws MalformedFrameException {
        RemoteAccessTarget t = ready();
        if (seq < 0) {
            applyActiveMessage(t, token, id, header, payload);
            return;
        }
        DedupWindow w = window(originId);
        synchronized (w) {
            if (!answeredBefore(token, originId, seq, w) && applyActiveMessage(t, token, id, header, payload)) {
                w.record(seq, 0);
            }
        }
    }

    private boolean applyActiveMessage(RemoteAccessTarget t, long token, int id, ByteBuf header, ByteBuf payload) {
        try {
            t.activeMessage(id, header.nioBuffer(), payload.nioBuffer());
        } catch (FencelineException e) {
            nack(token, e);
            return false;
        }
        ctx.write(FrameEncoder.ack(ctx.alloc(), token, 0));
        return true;
    }

    @Override
    public void flush(long token) throws MalformedFrameException {
        ready();
        // Everything this connection carried before is applied and answered: the answer says so.
        ctx.write(FrameEncoder.flushed(ctx.alloc(), token));
    }
}
