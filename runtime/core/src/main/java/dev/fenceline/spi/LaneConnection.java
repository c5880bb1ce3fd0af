package dev.fenceline.spi;

import dev.fenceline.LaneType;
import java.util.Set;

/**
 * One transport connection that an endpoint uses as a lane. Methods are called only by the owning
 * endpoint actor, one at a time, and never block; results arrive at the bound {@link LaneListener}.
 */
public interface LaneConnection {
    /** @return an identity unique within the JVM: a replaced connection has a different id */
    long id();

    /** @return the transport's name */
    String transport();

    /** @return what the lane can carry */
    Set<LaneType> types();

    /** @return the largest payload of one RMA operation */
    int maxFragment();

    /**
     * What the lane can do. The endpoint reads it once per connection, splits puts and gets by it
     * and tells each operation its protocol ({@link TransportOp#protocol()}). The default: software
     * on everything, payloads copied up to {@link #maxFragment()}.
     *
     * @return the lane's capabilities
     */
    default LaneCapabilities capabilities() {
        return LaneCapabilities.software(maxFragment(), deduplicates());
    }

    /**
     * Binds the listener that receives this connection's completions and failures. Called once,
     * before the first operation.
     *
     * @param listener the owning endpoint's listener
     */
    void bind(LaneListener listener);

    /**
     * Starts an operation.
     *
     * @param op the operation; the lane reads it only during this call, except for the buffers it
     *     refers to, which it may use until the operation completes
     * @return {@link PostStatus#IN_PROGRESS} (a completion will follow),
     *     {@link PostStatus#COMPLETED} (done and remotely visible, result in {@link TransportOp#result()})
     *     or {@link PostStatus#NO_RESOURCE} (retry after {@link LaneListener#onReady()})
     * @throws dev.fenceline.FencelineException if the operation can never succeed on this lane
     */
    PostStatus post(TransportOp op);

    /**
     * Remote flush: {@link LaneListener#onFlushed(long)} follows once everything posted before is
     * complete and visible at the target.
     *
     * @param token echoed to the listener
     * @return {@link PostStatus#IN_PROGRESS}, {@link PostStatus#COMPLETED} (already flushed, no
     *     callback) or {@link PostStatus#NO_RESOURCE}
     */
    PostStatus flush(long token);

    /**
     * A keepalive probe on an idle lane: answered like a flush (through
     * {@link LaneListener#onFlushed(long)}) when the peer is reachable. A transport with a cheaper
     * liveness check may override it.
     *
     * @param token echoed to the listener
     * @return as {@link #flush(long)}
     */
    default PostStatus keepalive(long token) {
        return flush(token);
    }

    /**
     * Whether the transport itself watches this lane's peer and fails the lane (through its listener)
     * when the peer stops answering, within the endpoint keepalive's timeout when keepalive is on. The
     * endpoint then sends the lane no keepalive probes: a transport that watches each peer process
     * once spares a probe per lane, and an endpoint whose lanes are all watched is not ticked at all.
     *
     * @return true if the transport watches the lane's peer; false (the default) to be probed
     */
    default boolean watchesLiveness() {
        return false;
    }

    /** Weak fence: operations posted after it are applied after those posted before it. */
    void fence();


    /**
     * @return whether the target deduplicates re-sent operations by (origin, sequence) (software
     *     protocols do); if not, an atomic whose completion was lost with the lane cannot be retried
     */
    boolean deduplicates();

    /**
     * Lanes whose scopes are equal (and not null) reach one exactly-once window at their target: a
     * copy re-sent on any of them is recognized as the same operation, applied at most once, and a
     * late copy never applies after the first one was answered. The endpoint sends an operation
     * whose copy may have been applied, or may still be, again only on a lane of the same scope.
     *
     * @return the scope, for example the target worker's id for a transport whose target keeps one
     *     window per origin endpoint across all its connections; null if re-sent copies are not
     *     recognized (the default)
     */
    default Object exactlyOnceScope() {
        return null;
    }

    /**
     * The endpoint gave this connection up ({@link #abort} or {@link #close} came first) and is about
     * to send again, or report failed, what it posted here and had no answer for. The connection
     * makes every such operation that has not been applied unable to apply, where it can, and says
     * what it knows. Called once per connection, by the endpoint actor; it must not block.
     *
     * @return the fate of each unanswered operation; the default, {@link Revocation#MAY_STILL_APPLY},
     *     is right for a transport that cannot reach copies it already handed over
     */
    default Revocation revoke() {
        return Revocation.MAY_STILL_APPLY;
    }

    /**
     * @return whether this lane's target reports {@link RequestTrace#visible} for every operation
     *     it applies (the test kit's simulated lanes do), so that a test kit may expect it
     */
    default boolean reportsVisibility() {
        return false;
    }

    /**
     * The endpoint is done with this connection; outstanding operations fail through the listener.
     * A transport that reconnects failed lanes stops doing so for this lane.
     */
    void close();

    /**
     * The endpoint gave up on this connection although the transport did not report it failed (a
     * keepalive went unanswered), or it acknowledges a failure the transport reported, and fails
     * over. Unlike {@link #close()}, the lane is still wanted: a transport that reconnects failed
     * lanes treats this as a failure and may later report {@link LaneListener#onRecovered}.
     *
     * @param cause why the endpoint gave up
     */
    default void abort(Throwable cause) {
        close();
    }
}
