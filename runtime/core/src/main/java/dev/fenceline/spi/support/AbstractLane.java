package dev.fenceline.spi.support;

import dev.fenceline.FencelineException;
import dev.fenceline.spi.LaneConnection;
import dev.fenceline.spi.LaneListener;
import dev.fenceline.spi.TransportOp;
import java.nio.ByteBuffer;
import java.util.concurrent.atomic.AtomicReferenceFieldUpdater;

/**
 * What every lane that answers on its own thread shares: its identity, its phase (live, failed by
 * the transport, given up or closed by the endpoint), the bound listener, the payload limit check,
 * the guard that keeps a late GET answer out of a buffer the endpoint already handed back, and the
 * batch of completions gathered in one pass.
 */
public abstract class AbstractLane implements LaneConnection {
    /** Where a lane is in its life. */
    protected enum Phase {
        /** Carrying operations. */
        LIVE,
        /** The transport saw the connection die. */
        FAILED,
        /** The endpoint gave the lane up (it may be recovered). */
        ABORTED,
        /** The endpoint is done with it. */
        CLOSED
    }

    /**
     * Copies a GET's answer from where the transport holds it into the user's buffer.
     *
     * @param <S> where the answer is
     */
    @FunctionalInterface
    protected interface SinkCopy<S> {
        /**
         * @param source where the answer is
         * @param offset where in it the data starts
         * @param sink the user's buffer (position to limit receives the data; not moved)
         */
        void copy(S source, int offset, ByteBuffer sink);
    }

    private final long id = ConnectionIds.next();
    private final String transport;
    private static final AtomicReferenceFieldUpdater<AbstractLane, Phase> PHASE =
            AtomicReferenceFieldUpdater.newUpdater(AbstractLane.class, Phase.class, "phase");
    /** Through {@link #PHASE}: a field, not an atomic object (a worker may hold tens of thousands of lanes). */
    private volatile Phase phase = Phase.LIVE;
    /** Held while a GET's data is copied into the user's buffer, and while the endpoint takes the lane away. */
    private final Object sinkGuard = new Object();
    /** Starts empty: an idle lane (of ten thousand) holds no arrays; a busy one grows them once. */
    private final CompletionBatch batch = new CompletionBatch(0, 256);
    private volatile LaneListener listener;

    /** @param transport the transport's name, as in {@code fenceline.transports} */
    protected AbstractLane(String transport) {
        this.transport = transport;
    }

    @Override
    public final long id() {
        return id;
    }

    @Override
    public final String transport() {
        return transport;
    }

    /** @return the bound listener, or null before {@link #bind} */
    protected final LaneListener listener() {
        return listener;
    }

    /**
     * Keeps the listener for the lane's threads, and reports a failure {@link #reportFailed} saw
     * before it; called by {@link #bind}.
     *
     * @param l the listener
     */
    protected final void listen(LaneListener l) {
        this.listener = l;
        reportFailureOnce();
    }

    private volatile Throwable failure;
    private final java.util.concurrent.atomic.AtomicBoolean failureReported =
            new java.util.concurrent.atomic.AtomicBoolean();

    /**
     * The transport found the connection dead (after {@link #markFailed()} said so): the listener
     * hears it once, now if bound, else at bind (a connection may break before its endpoint binds it).
     *
     * @param cause why
     */
    protected final void reportFailed(Throwable cause) {
        failure = cause;
        reportFailureOnce();
    }

    /** Once, whichever of the failure and the bind comes second. */
    private void reportFailureOnce() {
        Throwable f = failure;
        LaneListener l = listener;
        if (f != null && l != null && failureReported.compareAndSet(false, true)) {
            l.onLaneFailed(f);
        }
    }

    /** @return whether the lane carries operations */
    protected final boolean live() {
        return phase == Phase.LIVE;
    }

    /** @return the lane's phase */
    protected final Phase phase() {
        return phase;
    }

    /** @return whether this call ended a live lane as failed (the transport saw it die) */
    protected final boolean markFailed() {
        return PHASE.compareAndSet(this, Phase.LIVE, Phase.FAILED);
    }

    /**
     * The endpoint takes the lane away: once this returns, no GET answer is copied into a user's
     * buffer any more (the endpoint may restart the GET elsewhere and hand the buffer back).
     *
     * @param to {@link Phase#ABORTED} (only a live lane is given up) or {@link Phase#CLOSED} (always)
     * @return the phase before
     */
    protected final Phase end(Phase to) {
        synchronized (sinkGuard) {
            if (to == Phase.ABORTED) {
                return PHASE.compareAndSet(this, Phase.LIVE, Phase.ABORTED) ? Phase.LIVE : phase;
            }
            return PHASE.getAndSet(this, to);
        }
    }

    /**
     * Copies a GET's answer into the user's buffer, unless the endpoint took the lane away first.
     *
     * @param <S> where the answer is
     * @param source where the answer is
     * @param offset where in it the data starts
     * @param sink the user's buffer
     * @param how the copy (a static method: nothing is allocated)
     * @return whether it was copied
     */
    protected final <S> boolean copyIntoSink(S source, int offset, ByteBuffer sink, SinkCopy<S> how) {
        synchronized (sinkGuard) {
            if (!live()) {
                return false;
            }
            how.copy(source, offset, sink);
            return true;
        }
    }

    /**
     * Runs {@code action} (a failure the lane's answering thread found) unless the endpoint took the
     * lane away first, in which case the endpoint's close or abort has the last word.
     *
     * @param action what to do while the lane is live, under the same guard as {@link #end}
     */
    protected final void whileLive(Runnable action) {
        synchronized (sinkGuard) {
            if (live()) {
                action.run();
            }
        }
    }

    /**
     * @param op an operation to post
     * @return its payload in bytes (data, or header and data of an active message; 0 for atomics)
     * @throws FencelineException if it exceeds {@link #maxFragment()}
     */
    protected final int checkedPayload(TransportOp op) {
        int payload = switch (op.kind()) {
            case PUT, GET -> op.local().remaining();
            case AM -> op.header().remaining() + op.local().remaining();
            default -> 0;
        };
        checkPayload(op.kind(), payload);
        return payload;
    }

    /**
     * @param kind what carries the payload
     * @param payload its size in bytes
     * @throws FencelineException if it exceeds {@link #maxFragment()}, or an active message
     *     {@link #maxMessage()}
     */
    protected final void checkPayload(TransportOp.Kind kind, int payload) {
        int max = kind == TransportOp.Kind.AM ? maxMessage() : maxFragment();
        if (payload > max) {
            throw new FencelineException(transport + ": " + kind + " of " + payload + " bytes exceeds the lane's limit"
                    + " of " + max + " (fenceline.transport." + transport + ".max-fragment, the smaller of both ends')");
        }
    }

    /**
     * @return the largest active message (header and payload) the lane carries: by default
     *     {@link #maxFragment()}; a lane that sends a message in parts carries larger ones
     */
    protected int maxMessage() {
        return maxFragment();
    }

    /**
     * Gathers a completion (the lane's answering thread only); a full batch is reported at once.
     *
     * @param token the operation's token
     * @param value its fetched value, or 0
     */
    protected final void completed(long token, long value) {
        if (batch.add(token, value)) {
            reportCompletions();
        }
    }

    /**
     * Reports the completions gathered so far (the lane's answering thread only), if the lane is
     * live, or if {@link #answersAfterEnd()}.
     */
    protected final void reportCompletions() {
        batch.report(live() || answersAfterEnd() ? listener : null);
    }

    /** @return whether completions are gathered and not yet reported (the lane's answering thread only) */
    protected final boolean completionsPending() {
        return batch.size() > 0;
    }

    /**
     * @return whether every completion this lane gathers is owed to the endpoint even after the lane
     *     ended: a lane that decides, as it takes each answer, whether the endpoint still waits for
     *     it (one that revokes, and says {@code ANSWER_FOLLOWS} for what it had taken) gathers only
     *     those; by default, completions of an ended lane are dropped
     */
    protected boolean answersAfterEnd() {
        return false;
    }
}
