package dev.fenceline.transport.tcp;

import dev.fenceline.AtomicOp;
import dev.fenceline.FencelineException;
import dev.fenceline.spi.support.DedupWindow;
import dev.fenceline.spi.support.ExactlyOnceWindows;
import dev.fenceline.spi.support.ExactlyOnce;
import dev.fenceline.spi.RemoteAccessTarget;
import dev.fenceline.spi.support.WireCodes;
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
    private final ServerHandshake handshake;
    private ExactlyOnceWindows.Window origin;
    /** The worker the peer proved to be, and what it proved beyond that (set once authenticated). */
    private java.util.UUID peerWorker;
    private String peerProof;
    /** Who it is, for messages. */
    private String identity;

    TargetHandler(TcpTransport transport) {
        this.transport = transport;
        this.activeMessages = new TargetActiveMessages(transport, connection, appliers);
        this.handshake = new ServerHandshake(transport.handshake(), transport.workerId());
        this.unreadAnswers = new UnreadAnswers(transport, () -> state != State.CLOSED, this::closeNow,
                () -> drainHeld(ctx), handshake::peer);
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
        if (handlerRunning) {
            // An active message's handler runs off the event loop: what follows it waits, in order.
            held.add(frame);
            c.channel().config().setAutoRead(false);
            return;
        }
        if (!held.isEmpty() || (state == State.READY && !unreadAnswers.room(c))) {
            // Answers wait unread: this frame, and the rest of this read, wait in order until they
            // drain (reads are paused, so at most one read's worth of frames is held here).
            held.add(frame);
            unreadAnswers.pause(c);
            return;
        }
        apply(c, frame);
    }

    /** Decodes and applies one frame, then releases it. */
    private void apply(ChannelHandlerContext c, ByteBuf frame) {
        try {
            if (state != State.CLOSED) {
                current = frame;
                FrameDecoder.decode(frame, this, transport.settings().maxFragment());
            }
        } catch (MalformedFrameException e) {
            LOG.warn("tcp {}: closing connection from {}: {}", transport.workerName(), c.channel().remoteAddress(),
                    e.getMessage());
            closeNow();
        } catch (RuntimeException | Error e) {
            // Also where a held frame is applied from an event-loop task (after an active message's
            // handler), where Netty would only log it and the connection would wait, unread, for good.
            LOG.warn("tcp {}: closing connection from {}: applying a frame failed: {}", transport.workerName(),
                    c.channel().remoteAddress(), e.toString(), e);
            closeNow();
            if (e instanceof Error fatal) {
                throw fatal;
            }
        } finally {
            current = null;
            frame.release();
        }
    }

    /** The frame being decoded, so that an active message can keep it while its handler runs. */
    private ByteBuf current;
    /**
     * Whether an active message's handler runs now, or a copy waits for its first copy's outcome
     * ({@link TargetActiveMessages}); the frames after it are held until it is answered.
     */
    private boolean handlerRunning;

    @Override
    public void channelReadComplete(ChannelHandlerContext c) {
        // Room with the batch's answers queued (unflushed bytes count, plaintext under TLS: the
        // per-frame check in channelRead catches the little TLS adds) is room once they are flushed.
        // A batch that ended at the peer's end of stream is flushed now: Netty closes the connection
        // right after this, and a held flush would lose the answers to what it applied.
        if (unreadAnswers.room(c) && c.channel().eventLoop() instanceof LendingEventLoop loop
                && c.channel().unsafe().recvBufAllocHandle().lastBytesRead() >= 0) {
            loop.flushAfterPoll(c);
            return;
        }
        c.flush();
        if (!unreadAnswers.room(c)) {
            unreadAnswers.pause(c);
        }
    }

    /** The limit on the answers this connection leaves unread. */
    private final UnreadAnswers unreadAnswers;

    /**
     * The answers drained to half: the held frames go on, in order, while the channel stays
     * writable; reading resumes once none is left. Progress restarts the unread timeout.
     */
    @Override
    public void channelWritabilityChanged(ChannelHandlerContext c) {
        if (c.channel().isWritable() && !c.channel().config().isAutoRead() && state != State.CLOSED) {
            drainHeld(c);
        }
        c.fireChannelWritabilityChanged();
    }

    /**
     * The held frames go on, in order, while the channel stays writable and no handler runs;
     * reading resumes once none is left. Progress restarts the unread timeout.
     */
    private void drainHeld(ChannelHandlerContext c) {
        ByteBuf next;
        while (!handlerRunning && unreadAnswers.room(c) && (next = held.poll()) != null) {
            apply(c, next);
        }
        c.flush();
        if (handlerRunning || state == State.CLOSED) {
            return;
        }
        if (held.isEmpty() && unreadAnswers.room(c)) {
            unreadAnswers.resume(c);
        } else {
            unreadAnswers.stillPaused(c);
        }
    }

    /** Frames that arrived while the peer's answers waited unread, in order; released when the channel ends. */
    private final java.util.ArrayDeque<ByteBuf> held = new java.util.ArrayDeque<>();

    @Override
    public void exceptionCaught(ChannelHandlerContext c, Throwable cause) {
        if (state == State.CLOSED) {
            // Closing already: Netty fails each queued answer's write (one event per answer, up to
            // limits.queued-bytes of them); they say nothing new, and must not cost a log line each.
            return;
        }
        // A frame over the size limit (TooLongFrameException), a reset, a timeout: that connection ends.
        String why = cause.toString();
        if (cause.getCause() instanceof io.netty.handler.ssl.NotSslRecordException) {
            // A peer with security = secret sends its HELLO in clear: say which setting differs.
            why = "the peer does not speak TLS, while this side has fenceline.transport.tcp.security = tls: a"
                    + " Fenceline peer needs the same security (" + why + ")";
        }
        LOG.warn("tcp {}: closing connection from {}: {}", transport.workerName(), c.channel().remoteAddress(), why);
        closeNow();
    }

    @Override
    public void channelInactive(ChannelHandlerContext c) {
        state = State.CLOSED;
        if (handshakeTimeout != null) {
            handshakeTimeout.cancel(false);
        }
        unreadAnswers.left();
        ByteBuf h;
        while ((h = held.poll()) != null) {
            h.release();
        }
        if (origin != null) {
            transport.windows().release(origin); // it lingers for copies re-sent over another rail or transport
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
        try {
            byte[] serverNonce = handshake.hello(min, max, client, server, nonce);
            state = State.AWAIT_AUTH;
            ctx.writeAndFlush(FrameEncoder.challenge(ctx.alloc(), Wire.VERSION, serverNonce));
        } catch (ServerHandshake.Refused r) {
            refuse(r);
        }
    }

    @Override
    public void auth(byte[] proof) throws MalformedFrameException {
        if (state != State.AWAIT_AUTH) {
            throw new MalformedFrameException("AUTH in state " + state);
        }
        byte[] serverProof;
        try {
            serverProof = handshake.authenticate(proof);
        } catch (ServerHandshake.Refused r) {
            refuse(r);
            return;
        }
        peerWorker = handshake.peer();
        peerProof = TlsContexts.proof(ctx.channel());
        identity = (peerProof.isEmpty() ? "" : peerProof + ", ") + "worker " + peerWorker;
        if (!transport.authenticated(ctx.channel())) {
            closeNow(); // pushed out for a newer connection while it handshook: it is being closed
            return;
        }
        state = State.READY;
        unreadAnswers.joined(ctx);
        FrameSplitter frames = ctx.pipeline().get(FrameSplitter.class);
        if (frames != null) {
            frames.authenticated();
        }
        handshakeTimeout.cancel(false);
        LOG.debug("tcp {}: accepted {} as {}", transport.workerName(), ctx.channel().remoteAddress(), identity);
        ctx.writeAndFlush(FrameEncoder.welcome(ctx.alloc(), transport.settings().maxFragment(), serverProof));
    }

    private void refuse(ServerHandshake.Refused r) {
        LOG.warn("tcp {}: refused {}: {}", transport.workerName(), ctx.channel().remoteAddress(), r.getMessage());
        sendRefusal(r.reason);
    }

    // ------------------------------------------------------------------ operations

    private RemoteAccessTarget ready() throws MalformedFrameException {
        if (state != State.READY) {
            throw new MalformedFrameException("operation before authentication");
        }
        return transport.target();
    }

    /**
     * The dedup window of {@code id} for this peer; a connection carries one endpoint's operations.
     *
     * @throws FencelineException if the peer's (or the target's) dedup bound cannot hold it
     */
    private DedupWindow window(long id) {
        if (origin == null || origin.origin() != id) {
            if (origin != null) {
                transport.windows().release(origin);
                origin = null;
            }
            origin = transport.windows().retain(peerWorker, peerProof, id);
            if (origin == null) {
                throw new FencelineException("tcp worker '" + transport.workerName() + "': no room for the exactly-once"
                        + " window of endpoint " + Long.toHexString(id) + " of " + identity + ": its peer holds as"
                        + " much as fenceline.exactly-once.entries-per-peer allows, or all peers hold"
                        + " fenceline.exactly-once.entries; not applied");
            }
        }
        return origin.window();
    }

    /**
     * Queues an answer for the read batch's flush. No promise: nobody waits on one, and a write that
     * fails reaches {@link #exceptionCaught}, which closes the connection.
     */
    private void answer(Object frame) {
        ctx.write(frame, ctx.voidPromise());
    }

    private void nack(long token, FencelineException e) {
        answer(FrameEncoder.nack(ctx.alloc(), token, WireCodes.errorCode(e), WireCodes.reasonCode(e),
                String.valueOf(e.getMessage())));
    }

    /**
     * Applies an operation at most once, and answers it: under the origin's window lock, so a copy
     * re-sent over another rail waits for the first and is then answered from the window. A numbered
     * active message, whose handler (a user's, of any length) runs outside the lock, goes through
     * {@link TargetActiveMessages} instead.
     */
    private void once(long token, long originId, long seq, long low, ExactlyOnce.Operation apply) {
        long value;
        try {
            if (seq < 0) {
                transport.exactlyOnce().checkNotRefused(window(originId), originId);
                value = apply.apply();
            } else {
                DedupWindow w = window(originId);
                synchronized (w) {
                    value = transport.exactlyOnce().apply(w, originId, seq, low, apply);
                }
            }
        } catch (FencelineException e) {
            nack(token, e);
            return;
        }
        answer(FrameEncoder.ack(ctx.alloc(), token, value));
    }

    /** The operation being applied, and its appliers, which run inside once(). */
    private final TargetAppliers appliers = new TargetAppliers();

    /** What the active messages see of this connection. */
    private final TargetActiveMessages.Connection connection = new TargetActiveMessages.Connection() {
        @Override
        public ChannelHandlerContext context() {
            return ctx;
        }

        @Override
        public DedupWindow window(long originId) {
            return TargetHandler.this.window(originId);
        }

        @Override
        public void answer(Object frame) {
            TargetHandler.this.answer(frame);
        }

        @Override
        public void nack(long token, FencelineException e) {
            TargetHandler.this.nack(token, e);
        }

        @Override
        public void hold() {
            handlerRunning = true;
            ctx.channel().config().setAutoRead(false);
            unreadAnswers.cancel(); // a timeout must not end the connection while the handler runs: goOn judges
        }

        @Override
        public boolean release() {
            handlerRunning = false;
            return state != State.CLOSED;
        }

        @Override
        public void goOn() {
            drainHeld(ctx);
        }
    };

    private final TargetActiveMessages activeMessages;

    @Override
    public void put(long token, long originId, long seq, long low, long k, long a, ByteBuf d)
            throws MalformedFrameException {
        appliers.target = ready();
        appliers.key = k;
        appliers.address = a;
        appliers.data = d;
        try {
            once(token, originId, seq, low, appliers.applyPut);
        } finally {
            appliers.data = null;
        }
    }

    @Override
    public void get(long token, long originId, long seq, long low, long k, long a, int length)
            throws MalformedFrameException {
        RemoteAccessTarget t = ready();
        // A read has no effect, so a re-sent one is simply read again (at its place in the order).
        ByteBuf out = ctx.alloc().directBuffer(length, length);
        try {
            transport.exactlyOnce().checkNotRefused(window(originId), originId);
            t.get(k, a, out.nioBuffer(0, length));
        } catch (FencelineException e) {
            out.release();
            nack(token, e);
            return;
        } catch (RuntimeException e) {
            out.release();
            throw e;
        }
        out.writerIndex(length);
        answer(FrameEncoder.getDataHeader(ctx.alloc(), token, length));
        answer(out);
    }

    @Override
    public void atomic(long token, long originId, long seq, long low, long k, long a, int kd, AtomicOp o, int w,
            long operandValue, long compareValue) throws MalformedFrameException {
        appliers.target = ready();
        appliers.key = k;
        appliers.address = a;
        appliers.kind = kd;
        appliers.op = o;
        appliers.width = w;
        appliers.operand = operandValue;
        appliers.compare = compareValue;
        once(token, originId, seq, low, appliers.applyAtomic);
    }

    @Override
    public void activeMessage(long token, long originId, long seq, long low, int id, ByteBuf h, ByteBuf payload)
            throws MalformedFrameException {
        appliers.target = ready();
        activeMessages.receive(token, originId, seq, low, id, h, payload, current);
    }

    @Override
    public void flush(long token) throws MalformedFrameException {
        ready();
        // Everything this connection carried before is applied and answered: the answer says so.
        answer(FrameEncoder.flushed(ctx.alloc(), token));
    }
}
