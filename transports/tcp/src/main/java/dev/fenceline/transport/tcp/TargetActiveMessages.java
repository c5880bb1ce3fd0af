package dev.fenceline.transport.tcp;

import dev.fenceline.ActiveMessageException;
import dev.fenceline.EndpointFailedException;
import dev.fenceline.FencelineException;
import dev.fenceline.spi.RemoteAccessTarget;
import dev.fenceline.spi.support.DedupWindow;
import io.netty.buffer.ByteBuf;
import io.netty.channel.ChannelHandlerContext;
import io.netty.util.concurrent.EventExecutor;
import java.nio.ByteBuffer;
import java.util.concurrent.Executor;
import java.util.concurrent.RejectedExecutionException;

/**
 * The active messages of one incoming connection ({@link TargetHandler}): each runs at most once
 * per (origin endpoint, sequence), its handler (a user's, of any length) on the transport's handler
 * threads, or on the event loop with {@code active-message-threads = 0}. While a handler runs, the
 * connection's later frames are held in order; the answer is written, and the window told, back on
 * the event loop. A copy whose first one runs now (sent again over another rail, which failed while
 * the handler ran) waits the same way for the first copy's outcome and is answered with it, so the
 * origin learns whether it was applied instead of an {@link dev.fenceline.OutcomeUnknownException}.
 * Event loop only, but for the handlers themselves.
 */
final class TargetActiveMessages {
    /** What an active message needs of its connection. Event loop only. */
    interface Connection {
        /** @return the channel's context */
        ChannelHandlerContext context();

        /**
         * @param originId the origin endpoint
         * @return its dedup window
         * @throws FencelineException if the peer's dedup bound cannot hold it
         */
        DedupWindow window(long originId);

        /** Queues an answer for the read batch's flush. */
        void answer(Object frame);

        /** Queues a refusal. */
        void nack(long token, FencelineException e);

        /** The frames after this one wait, in order, until {@link #release} and {@link #goOn}. */
        void hold();

        /** @return whether the connection is still open, to answer on */
        boolean release();

        /** Goes on with the frames that waited. */
        void goOn();
    }

    private final TcpTransport transport;
    private final Connection connection;
    /** Shared with the connection's other operations; the active message's fields are set here. */
    private final TargetAppliers appliers;

    TargetActiveMessages(TcpTransport transport, Connection connection, TargetAppliers appliers) {
        this.transport = transport;
        this.connection = connection;
        this.appliers = appliers;
    }

    /**
     * One active message, to {@code appliers.target}. {@code frame} (which {@code h} and
     * {@code payload} view) stays the caller's; what runs or waits later keeps a reference of its own.
     */
    void receive(long token, long originId, long seq, long low, int id, ByteBuf h, ByteBuf payload, ByteBuf frame) {
        if (seq >= 0) {
            numbered(token, originId, seq, low, id, h, payload, frame);
            return;
        }
        try {
            transport.exactlyOnce().checkNotRefused(connection.window(originId), originId);
        } catch (FencelineException e) {
            connection.nack(token, e);
            return;
        }
        run(token, originId, seq, null, id, h, payload, frame);
    }

    /** An active message with a sequence number: run once, or answered with the first copy's outcome. */
    private void numbered(long token, long originId, long seq, long low, int id, ByteBuf h, ByteBuf payload,
            ByteBuf frame) {
        DedupWindow w;
        try {
            w = connection.window(originId);
            synchronized (w) {
                switch (transport.exactlyOnce().beginOutsideOrWait(w, originId, seq, low)) {
                    case APPLIED_BEFORE -> {
                        connection.answer(FrameEncoder.ack(connection.context().alloc(), token, w.result(seq)));
                        return;
                    }
                    case FIRST_COPY_RUNNING -> {
                        awaitFirstCopy(w, token, originId, seq, low, id, h, payload, frame);
                        return;
                    }
                    case RUN -> {
                    }
                }
            }
        } catch (FencelineException e) {
            connection.nack(token, e);
            return;
        }
        run(token, originId, seq, w, id, h, payload, frame);
    }

    /**
     * Runs the handler of a message let run (begun in {@code w}, or without a sequence number if
     * {@code w} is null): on the handler threads, or on the event loop without them; answers it.
     */
    private void run(long token, long originId, long seq, DedupWindow w, int id, ByteBuf h, ByteBuf payload,
            ByteBuf frame) {
        Executor handlers = transport.handlers();
        if (handlers != null) {
            runHandler(handlers, token, seq, w, id, h.nioBuffer(), payload.nioBuffer(), frame.retain());
            return;
        }
        long value;
        try {
            value = inline(id, h, payload, w, originId, seq);
        } catch (FencelineException e) {
            connection.nack(token, e);
            return;
        }
        connection.answer(FrameEncoder.ack(connection.context().alloc(), token, value));
    }

    /** Runs the handler on the event loop; through the window if {@code w} is not null (begun). */
    private long inline(int id, ByteBuf h, ByteBuf payload, DedupWindow w, long originId, long seq) {
        appliers.amId = id;
        appliers.header = h;
        appliers.data = payload;
        try {
            return w == null ? appliers.applyActiveMessage.apply()
                    : transport.exactlyOnce().runBegun(w, originId, seq, appliers.applyActiveMessage);
        } finally {
            appliers.header = null;
            appliers.data = null;
        }
    }

    /**
     * Holds this copy, and the frames after it, until its first copy's outcome is recorded; then
     * decides again on the event loop (the window answers it). The caller holds the window's lock.
     */
    private void awaitFirstCopy(DedupWindow w, long token, long originId, long seq, long low, int id, ByteBuf h,
            ByteBuf payload, ByteBuf frame) {
        ByteBuf kept = frame.retain();
        connection.hold();
        EventExecutor loop = connection.context().executor();
        w.whenFinished(seq, () -> {
            try {
                loop.execute(() -> firstCopyEnded(token, originId, seq, low, id, h, payload, kept));
            } catch (RejectedExecutionException shutDown) {
                kept.release(); // the transport closed: nobody to answer
            }
        });
    }

    /** On the event loop: the first copy's outcome is known; answer this copy, go on with what waited. */
    private void firstCopyEnded(long token, long originId, long seq, long low, int id, ByteBuf h, ByteBuf payload,
            ByteBuf kept) {
        if (!connection.release()) {
            kept.release();
            return; // the connection ended meanwhile: the origin sends it again elsewhere
        }
        try {
            appliers.target = transport.target();
            numbered(token, originId, seq, low, id, h, payload, kept);
        } finally {
            kept.release();
            connection.goOn(); // whatever happened, the frames held behind it go on
        }
    }

    /**
     * Runs a handler on the handler threads, so that one that blocks holds up only this connection
     * (whose later frames wait, in order) and never the event loop that serves the others.
     * {@code kept} is a reference to the frame {@code h} and {@code payload} view, released when
     * the handler returned; {@code w} is the window it was begun in, or null if it has no sequence.
     */
    private void runHandler(Executor handlers, long token, long seq, DedupWindow w, int id, ByteBuffer h,
            ByteBuffer payload, ByteBuf kept) {
        RemoteAccessTarget t = appliers.target;
        ChannelHandlerContext ctx = connection.context();
        connection.hold();
        try {
            handlers.execute(() -> {
                FencelineException error = null;
                try {
                    t.activeMessage(id, h, payload);
                } catch (RuntimeException e) { // a FencelineException is the target's own typed answer
                    error = e instanceof FencelineException f ? f : new ActiveMessageException(
                            "active message " + id + " failed at worker '" + transport.workerName() + "': " + e);
                }
                FencelineException outcome = error;
                try {
                    ctx.executor().execute(() -> handlerReturned(token, seq, w, outcome, kept));
                } catch (RejectedExecutionException shutDown) {
                    kept.release(); // the transport closed while the handler ran: nobody to answer,
                    if (w != null) { // but the window (shared with the worker's other transports) learns it ran
                        synchronized (w) {
                            transport.exactlyOnce().finishOutside(w, seq, 0, outcome);
                        }
                    }
                }
            });
        } catch (RejectedExecutionException closing) {
            handlerReturned(token, seq, w, new EndpointFailedException("tcp worker '" + transport.workerName()
                    + "' is closing: active message " + id + " not run"), kept);
        }
    }

    /** On the event loop: the handler returned (or could not run); answer, record, go on with what waited. */
    private void handlerReturned(long token, long seq, DedupWindow w, FencelineException error, ByteBuf kept) {
        kept.release();
        if (w != null) {
            synchronized (w) {
                transport.exactlyOnce().finishOutside(w, seq, 0, error);
            }
        }
        if (!connection.release()) {
            return; // the connection ended meanwhile; the window remembers the outcome for a re-sent copy
        }
        if (error != null) {
            connection.nack(token, error);
        } else {
            connection.answer(FrameEncoder.ack(connection.context().alloc(), token, 0));
        }
        connection.goOn();
    }
}
