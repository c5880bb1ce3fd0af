package dev.fenceline.transport.tcp;

import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelOutboundBuffer;
import io.netty.channel.WriteBufferWaterMark;
import io.netty.util.concurrent.ScheduledFuture;
import java.time.Duration;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;
import java.util.function.Supplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * What one incoming connection may leave unread of its answers: once authenticated, its share of
 * {@code limits.queued-bytes-total} ({@link AnswerShares}, at most {@code limits.queued-bytes}).
 * Over it, its further requests wait (held by its {@link TargetHandler}, or in the socket) until the
 * queue drains to half of it; if it does not within {@code limits.unread-timeout} (restarted by any
 * progress), the connection is closed. Event loop only, but for {@link #shareFell}.
 *
 * <p>The share is also the channel's write-buffer water marks, so that Netty's writability event
 * says when the queue drained. Netty compares the queue with them only when it grows or shrinks,
 * and the share moves with the number of connections, so the decisions here read the queued bytes
 * themselves, and a paused connection also looks again by itself (after 10 ms, then less often, up
 * to once a second) in case no event comes.
 */
final class UnreadAnswers implements AnswerShares.Member {
    private static final Logger LOG = LoggerFactory.getLogger(TargetHandler.class);
    /** The first look again of a paused connection, and the longest wait between two. */
    private static final long FIRST_LOOK_MS = 10;
    private static final long LONGEST_LOOK_MS = 1_000;

    private final TcpTransport transport;
    /** Whether the connection still serves (not closing). */
    private final BooleanSupplier serving;
    /** Closes the connection now. */
    private final Runnable close;
    /** Goes on with what waits, once the queue drained (without a writability event). */
    private final Runnable roomAgain;
    /** Who the peer is, for the log. */
    private final Supplier<Object> peer;
    /** Whether reading was paused here for want of room: the timeout and the looks act only then. */
    private boolean paused;
    /** Closes the connection if its answers stay unread; null when not armed. */
    private ScheduledFuture<?> timer;
    /** The next look of a paused connection; null when none is due. */
    private ScheduledFuture<?> look;
    /** Set once the connection authenticated: it shares the total from then on. */
    private ChannelHandlerContext ctx;
    /** How many connections shared the total when this one's share was last taken. */
    private int sharedBy;
    /** This connection's share then (and its water marks' high one). */
    private int share;

    /**
     * @param transport the connection's transport
     * @param serving whether the connection still serves (not closing)
     * @param close closes the connection now
     * @param roomAgain goes on with what waits once the queue drained
     * @param peer who the peer is, for the log
     */
    UnreadAnswers(TcpTransport transport, BooleanSupplier serving, Runnable close, Runnable roomAgain,
            Supplier<Object> peer) {
        this.transport = transport;
        this.serving = serving;
        this.close = close;
        this.roomAgain = roomAgain;
        this.peer = peer;
    }

    /** The connection authenticated: from now on it has its share of the total. */
    void joined(ChannelHandlerContext c) {
        ctx = c;
        transport.answerShares().joined(this);
    }

    /**
     * @return whether the answers queued now leave room for more (the share as it is now): if not,
     *     the next frame waits
     */
    boolean room(ChannelHandlerContext c) {
        return ctx == null ? c.channel().isWritable() : queued(c) <= share(c);
    }

    /** @return whether the queue drained to half of the share as it is now: a paused connection reads again */
    private boolean drained(ChannelHandlerContext c) {
        return ctx == null ? c.channel().isWritable() : queued(c) <= share(c) / 2;
    }

    /** @return this connection's share now, taken again (with the water marks) when the count changed */
    private int share(ChannelHandlerContext c) {
        AnswerShares shares = transport.answerShares();
        int n = shares.count();
        if (n != sharedBy) {
            sharedBy = n;
            int s = shares.share(n);
            if (s != share) {
                share = s;
                c.channel().config().setWriteBufferWaterMark(new WriteBufferWaterMark(s / 2, s));
            }
        }
        return share;
    }

    private static long queued(ChannelHandlerContext c) {
        ChannelOutboundBuffer out = c.channel().unsafe().outboundBuffer();
        return out == null ? 0 : out.totalPendingWriteBytes();
    }

    /**
     * No room: reading pauses, and the answers must drain within the unread timeout (unless paused
     * already, here or for an active message's handler, whose end judges the room again).
     */
    void pause(ChannelHandlerContext c) {
        if (!c.channel().config().isAutoRead()) {
            return;
        }
        c.channel().config().setAutoRead(false);
        stillPaused(c);
    }

    /**
     * Reading is off and there is no room (after some progress, or as an active message's handler
     * ended): the unread timeout starts again.
     */
    void stillPaused(ChannelHandlerContext c) {
        cancel();
        paused = true;
        Duration timeout = transport.settings().limits().unreadTimeout();
        timer = c.executor().schedule(() -> {
            timer = null;
            if (!paused || !serving.getAsBoolean()) {
                return;
            }
            if (drained(c)) { // the share as it is now: connections may have left since
                roomAgain.run();
                return;
            }
            LOG.warn("tcp {}: closing connection from {} (worker {}): it left {} bytes of answers unread for {}",
                    transport.workerName(), c.channel().remoteAddress(), peer.get(), queued(c), timeout);
            close.run();
        }, timeout.toNanos(), TimeUnit.NANOSECONDS);
        lookAgain(c, FIRST_LOOK_MS);
    }

    /** Looks again after {@code delayMs}, then less often, until the queue drained or the connection reads or ends. */
    private void lookAgain(ChannelHandlerContext c, long delayMs) {
        look = c.executor().schedule(() -> {
            look = null;
            if (!paused || !serving.getAsBoolean()) {
                return;
            }
            if (drained(c)) {
                roomAgain.run(); // reads again, or pauses again (which looks again)
            } else {
                lookAgain(c, Math.min(LONGEST_LOOK_MS, delayMs * 2));
            }
        }, delayMs, TimeUnit.MILLISECONDS);
    }

    /** Room again and nothing waits: reading resumes. */
    void resume(ChannelHandlerContext c) {
        cancel();
        paused = false;
        c.channel().config().setAutoRead(true);
    }

    /**
     * The connection reads on, ended, or an active message's handler runs (its end judges the room
     * again): no timeout, no looking again.
     */
    void cancel() {
        if (timer != null) {
            timer.cancel(false);
            timer = null;
        }
        if (look != null) {
            look.cancel(false);
            look = null;
        }
    }

    /** The connection ended: it no longer shares the total. */
    void left() {
        cancel();
        paused = false;
        if (ctx != null) {
            transport.answerShares().left(this);
        }
    }

    /**
     * Its share fell (any thread): on its event loop, a connection that reads on although it now
     * holds more than its share pauses, and must drain within the unread timeout; one gone quiet
     * would otherwise keep what it queued under its old share for good. One paused already is
     * judged by the share as it is when its timeout ends.
     */
    @Override
    public void shareFell() {
        ChannelHandlerContext c = ctx;
        try {
            c.executor().execute(() -> {
                if (serving.getAsBoolean() && c.channel().config().isAutoRead() && !room(c)) {
                    pause(c);
                }
            });
        } catch (RejectedExecutionException stopping) {
            // its event loop stops with the transport: the connection ends with it
        }
    }
}
