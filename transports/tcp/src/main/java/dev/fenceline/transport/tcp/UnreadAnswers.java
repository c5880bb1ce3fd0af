package dev.fenceline.transport.tcp;

import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelOutboundBuffer;
import io.netty.util.concurrent.ScheduledFuture;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;
import java.util.function.Supplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * What one incoming connection may leave unread of its answers: at {@code limits.queued-bytes}
 * queued, its further requests wait (held by its {@link TargetHandler}, or in the socket) until the
 * queue drains to half; if it stays full past {@code limits.unread-timeout}, the connection is
 * closed. Event loop only.
 */
final class UnreadAnswers {
    private static final Logger LOG = LoggerFactory.getLogger(TargetHandler.class);

    private final TcpTransport transport;
    /** Whether the connection still serves (not closing). */
    private final BooleanSupplier serving;
    /** Closes the connection now. */
    private final Runnable close;
    /** Who the peer is, for the log. */
    private final Supplier<Object> peer;
    /** Closes the connection if its answers stay unread; null while it reads. */
    private ScheduledFuture<?> timer;

    /**
     * @param transport the connection's transport
     * @param serving whether the connection still serves (not closing)
     * @param close closes the connection now
     * @param peer who the peer is, for the log
     */
    UnreadAnswers(TcpTransport transport, BooleanSupplier serving, Runnable close, Supplier<Object> peer) {
        this.transport = transport;
        this.serving = serving;
        this.close = close;
        this.peer = peer;
    }

    /** @return whether the answers queued now leave room for more: if not, the next frame waits */
    boolean room(ChannelHandlerContext c) {
        return c.channel().isWritable();
    }

    /** No room: reading pauses, and the answers must drain within the unread timeout (unless paused already). */
    void pause(ChannelHandlerContext c) {
        if (!c.channel().config().isAutoRead()) {
            return;
        }
        c.channel().config().setAutoRead(false);
        stillPaused(c);
    }

    /** Still no room, after some progress: the unread timeout starts again. */
    void stillPaused(ChannelHandlerContext c) {
        cancel();
        Duration timeout = transport.settings().limits().unreadTimeout();
        timer = c.executor().schedule(() -> {
            if (!room(c) && serving.getAsBoolean()) {
                ChannelOutboundBuffer out = c.channel().unsafe().outboundBuffer();
                LOG.warn("tcp {}: closing connection from {} (worker {}): it left {} bytes of answers unread for {}",
                        transport.workerName(), c.channel().remoteAddress(), peer.get(),
                        out == null ? 0 : out.totalPendingWriteBytes(), timeout);
                close.run();
            }
        }, timeout.toNanos(), TimeUnit.NANOSECONDS);
    }

    /** Room again and nothing waits: reading resumes. */
    void resume(ChannelHandlerContext c) {
        cancel();
        c.channel().config().setAutoRead(true);
    }

    /** The connection ended (or reads on): no timeout. */
    void cancel() {
        if (timer != null) {
            timer.cancel(false);
            timer = null;
        }
    }
}
