package dev.fenceline.transport.tcp;

import dev.fenceline.EndpointFailedException;
import dev.fenceline.FencelineException;
import dev.fenceline.spi.support.WireCodes;
import io.netty.buffer.ByteBuf;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import java.io.IOException;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The origin side of one lane's connection: runs the client half of the handshake (and checks the
 * server's proof, so a peer without the secret is never trusted either), then hands each reply to
 * the {@link TcpLane}. A malformed or unexpected frame, or a reply that does not match the oldest
 * outstanding operation, ends the connection, which fails the lane over.
 */
final class LaneHandler extends ChannelInboundHandlerAdapter implements FrameHandler {
    private static final Logger LOG = LoggerFactory.getLogger(LaneHandler.class);

    private final TcpTransport transport;
    private final Rail rail;
    private final CompletableFuture<TcpLane> ready;
    private final byte[] clientNonce = Handshake.nonce();
    private ChannelHandlerContext ctx;
    private TcpLane lane;
    /** The server's nonce, once its CHALLENGE came. */
    private byte[] serverNonce;
    /** Set when the connection ended: frames still buffered in the decoder are dropped. */
    private boolean ended;

    LaneHandler(TcpTransport transport, Rail rail, CompletableFuture<TcpLane> ready) {
        this.transport = transport;
        this.rail = rail;
        this.ready = ready;
    }

    @Override
    public void channelActive(ChannelHandlerContext c) {
        this.ctx = c;
        c.writeAndFlush(FrameEncoder.hello(c.alloc(), transport.workerId(), rail.peer(), clientNonce));
        c.fireChannelActive();
    }

    @Override
    public void channelRead(ChannelHandlerContext c, Object msg) {
        ByteBuf frame = (ByteBuf) msg;
        try {
            if (ended) {
                return;
            }
            FrameDecoder.decode(frame, this, transport.settings().maxFragment());
        } catch (MalformedFrameException e) {
            end(new EndpointFailedException("tcp: protocol error from " + c.channel().remoteAddress() + ": "
                    + e.getMessage()));
        } finally {
            frame.release();
        }
    }

    @Override
    public void channelReadComplete(ChannelHandlerContext c) {
        if (lane != null) {
            lane.readComplete();
        }
    }

    @Override
    public void exceptionCaught(ChannelHandlerContext c, Throwable cause) {
        end(new EndpointFailedException("tcp: connection " + c.channel().localAddress() + " -> "
                + c.channel().remoteAddress() + " failed: " + cause, cause));
    }

    @Override
    public void channelInactive(ChannelHandlerContext c) {
        end(new EndpointFailedException("tcp: connection " + c.channel().localAddress() + " -> "
                + c.channel().remoteAddress() + " closed", new IOException("channel inactive")));
        c.fireChannelInactive();
    }

    private void end(EndpointFailedException cause) {
        if (ended) {
            return;
        }
        ended = true;
        if (lane != null) {
            lane.failed(cause);
        } else {
            ready.completeExceptionally(cause);
        }
        if (ctx != null) {
            ctx.close();
        }
    }

    // ------------------------------------------------------------------ handshake

    @Override
    public void challenge(int version, byte[] nonce) throws MalformedFrameException {
        if (serverNonce != null) {
            throw new MalformedFrameException("a second CHALLENGE");
        }
        if (version != Wire.VERSION) {
            throw new MalformedFrameException("the peer chose protocol version " + version + ", not offered");
        }
        serverNonce = nonce;
        // The client proves first; the server's proof comes with WELCOME, and is checked there.
        ctx.writeAndFlush(FrameEncoder.auth(ctx.alloc(), transport.handshake().clientProof(version,
                transport.workerId(), rail.peer(), clientNonce, serverNonce)));
    }

    @Override
    public void welcome(int maxData, byte[] proof) throws MalformedFrameException {
        if (serverNonce == null || lane != null) {
            throw new MalformedFrameException("WELCOME out of turn");
        }
        byte[] expected = transport.handshake().serverProof(Wire.VERSION, transport.workerId(), rail.peer(),
                clientNonce, serverNonce);
        if (!Handshake.matches(expected, proof)) {
            LOG.warn("tcp {}: {} failed to prove it knows the secret; not connecting", transport.workerName(),
                    ctx.channel().remoteAddress());
            end(new RefusedException("tcp: " + ctx.channel().remoteAddress()
                    + " failed authentication (wrong secret on one side?)",
                    ctx.pipeline().get(io.netty.handler.ssl.SslHandler.class) != null));
            return;
        }
        FrameSplitter frames = ctx.pipeline().get(FrameSplitter.class);
        if (frames != null) {
            frames.authenticated(); // the server proved itself: full-size frames from now on
        }
        // Never send the target more than it accepts, whatever this side's own limit is.
        lane = new TcpLane(rail, ctx.channel(), transport.settings(),
                Math.min(transport.settings().maxFragment(), maxData));
        if (!ready.complete(lane)) {
            lane.close(); // the connect timed out meanwhile
        }
    }

    /**
     * The peer refused us (wrong secret, stale worker id, no common version): retrying cannot help,
     * if the refusal is the peer's. Over TLS it is (the server's certificate was checked first); with
     * a shared secret, a refusal before the server's proof, or a wrong proof, may be anyone's: whatever
     * answered at the peer's address (a process that took its port, one on the path).
     */
    static final class RefusedException extends EndpointFailedException {
        private static final long serialVersionUID = 1L;
        private final boolean authenticated;

        /**
         * @param message why
         * @param authenticated whether the refusal is known to come from the peer
         */
        RefusedException(String message, boolean authenticated) {
            super(message);
            this.authenticated = authenticated;
        }

        /** @return whether the refusal is known to come from the peer itself */
        boolean authenticated() {
            return authenticated;
        }
    }

    @Override
    public void refuse(String reason) {
        // An unauthenticated peer's text: keep it on one line in the log.
        String clean = reason.replaceAll("[\\p{Cntrl}]", "?");
        LOG.warn("tcp {}: {} refused the connection: {}", transport.workerName(), ctx.channel().remoteAddress(),
                clean);
        end(new RefusedException("tcp: " + ctx.channel().remoteAddress() + " refused the connection: " + clean,
                ctx.pipeline().get(io.netty.handler.ssl.SslHandler.class) != null));
    }

    // ------------------------------------------------------------------ replies

    private TcpLane lane() throws MalformedFrameException {
        if (lane == null) {
            throw new MalformedFrameException("a reply before the handshake finished");
        }
        return lane;
    }

    private static void check(String problem) throws MalformedFrameException {
        if (problem != null) {
            throw new MalformedFrameException(problem);
        }
    }

    @Override
    public void ack(long token, long value) throws MalformedFrameException {
        check(lane().answered(ReplyRing.OP, token, value, null, null));
    }

    @Override
    public void getData(long token, ByteBuf data) throws MalformedFrameException {
        check(lane().answered(ReplyRing.GET, token, 0, null, data));
    }

    @Override
    public void nack(long token, int code, int reason, String message) throws MalformedFrameException {
        FencelineException e = WireCodes.rebuild(code, reason, message);
        check(lane().answered(ReplyRing.OP, token, 0, e, null));
    }

    @Override
    public void flushed(long token) throws MalformedFrameException {
        check(lane().answered(ReplyRing.FLUSH, token, 0, null, null));
    }
}
