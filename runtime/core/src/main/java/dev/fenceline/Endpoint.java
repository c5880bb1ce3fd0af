package dev.fenceline;

import java.nio.ByteBuffer;
import java.util.List;
import java.util.concurrent.CompletionStage;

/**
 * A connection from a worker to one remote worker, spread over one or more lanes. Every operation
 * is non-blocking and returns a stage that completes when the operation is complete at the origin
 * and, for puts and atomics, applied at the target; errors are {@link FencelineException}s.
 *
 * <p>Ordering: operations issued after {@link #fence()} (or {@link Worker#fence()}) become visible
 * at the target only after everything issued on this endpoint before it. Without a fence,
 * operations on different lanes may be applied in any order. Active messages are ordered per lane
 * and are not fenced.
 *
 * <p>Buffers passed in must not be modified (put, send) or read (get) until the stage completes.
 *
 * <p>Stages of operations that completed at once (the fast path) may be one shared, completed
 * stage: do not use them as identities (map keys, say). Completing or obtruding a stage's
 * {@code toCompletableFuture()} copy affects only that copy.
 */
public interface Endpoint {
    /**
     * Writes {@code src}'s remaining bytes to the peer's memory.
     *
     * @param src the bytes to write (position to limit)
     * @param remoteAddress where to write them
     * @param key the key of the region that contains the range
     * @return completes when the bytes are visible at the target
     */
    CompletionStage<Void> put(ByteBuffer src, long remoteAddress, RemoteKey key);

    /**
     * A put without a completion of its own, for hot loops (UCX's implicit completion, JUCX's
     * {@code putNonBlockingImplicit}): the next {@link #flush()} completes it, and that flush fails
     * with the first error of any implicit operation issued before it. {@code src} must not be
     * modified until that flush completes.
     *
     * @param src the bytes to write (position to limit)
     * @param remoteAddress where to write them
     * @param key the key of the region that contains the range
     * @throws FencelineException at once if the arguments can never succeed (key, bounds) or the
     *     endpoint is closed or failed
     */
    void putImplicit(ByteBuffer src, long remoteAddress, RemoteKey key);

    /**
     * A posted 64-bit atomic without a completion of its own; see {@link #putImplicit}.
     *
     * @param op the operation (not SWAP, whose old value would be lost)
     * @param remoteAddress an 8-byte aligned remote address
     * @param key the key of the region that contains it
     * @param operand the operand
     * @throws FencelineException at once if the arguments can never succeed
     */
    void atomicPostImplicit64(AtomicOp op, long remoteAddress, RemoteKey key, long operand);

    /**
     * Reads {@code dst.remaining()} bytes of the peer's memory into {@code dst}.
     *
     * @param dst where to read into (position to limit)
     * @param remoteAddress where to read from
     * @param key the key of the region that contains the range
     * @return completes when {@code dst} holds the bytes
     */
    CompletionStage<Void> get(ByteBuffer dst, long remoteAddress, RemoteKey key);

    /**
     * @param op ADD, AND, OR or XOR
     * @param remoteAddress a 4-byte aligned address
     * @param key the region's key
     * @param operand the operand
     * @return completes when the operation is applied
     */
    CompletionStage<Void> atomicPost32(AtomicOp op, long remoteAddress, RemoteKey key, int operand);

    /**
     * @param op ADD, AND, OR or XOR
     * @param remoteAddress an 8-byte aligned address
     * @param key the region's key
     * @param operand the operand
     * @return completes when the operation is applied
     */
    CompletionStage<Void> atomicPost64(AtomicOp op, long remoteAddress, RemoteKey key, long operand);

    /**
     * @param op any operation
     * @param remoteAddress a 4-byte aligned address
     * @param key the region's key
     * @param operand the operand
     * @return the value before the operation
     */
    CompletionStage<Integer> atomicFetch32(AtomicOp op, long remoteAddress, RemoteKey key, int operand);

    /**
     * @param op any operation
     * @param remoteAddress an 8-byte aligned address
     * @param key the region's key
     * @param operand the operand
     * @return the value before the operation
     */
    CompletionStage<Long> atomicFetch64(AtomicOp op, long remoteAddress, RemoteKey key, long operand);

    /**
     * Atomically replaces the value with {@code desired} if it equals {@code expected}.
     *
     * @param remoteAddress a 4-byte aligned address
     * @param key the region's key
     * @param expected the value to compare with
     * @param desired the value to store
     * @return the value before the operation (equal to {@code expected} iff it was replaced)
     */
    CompletionStage<Integer> compareAndSwap32(long remoteAddress, RemoteKey key, int expected, int desired);

    /**
     * Atomically replaces the value with {@code desired} if it equals {@code expected}.
     *
     * @param remoteAddress an 8-byte aligned address
     * @param key the region's key
     * @param expected the value to compare with
     * @param desired the value to store
     * @return the value before the operation (equal to {@code expected} iff it was replaced)
     */
    CompletionStage<Long> compareAndSwap64(long remoteAddress, RemoteKey key, long expected, long desired);

    /**
     * Sends an active message to the handler registered for {@code id} at the peer. The buffers
     * are read until the returned stage completes, so they must not change before that; a handler
     * answering with the buffers it was given (valid only during its call) uses
     * {@link #sendActiveMessageImplicit}, which copies them.
     *
     * @param id the handler id
     * @param header a small header (position to limit)
     * @param payload the payload (position to limit)
     * @return completes when the peer's handler has returned
     */
    CompletionStage<Void> sendActiveMessage(int id, ByteBuffer header, ByteBuffer payload);

    /**
     * An active message without a completion of its own, for hot loops and for answering from a
     * handler: the next {@link #flush()} completes when the peer's handler has run for it, and fails
     * with the first error of any implicit operation issued before it (a handler that threw, a lane
     * that died before the answer came: {@link OutcomeUnknownException}). Header and payload are
     * copied before this returns, so a handler may pass on the buffers it was given. Messages on one
     * lane reach the handler in the order they were sent.
     *
     * @param id the handler id
     * @param header a small header (position to limit), or null
     * @param payload the payload (position to limit), or null
     * @throws FencelineException at once if the id is invalid or the endpoint is closed or failed
     */
    void sendActiveMessageImplicit(int id, ByteBuffer header, ByteBuffer payload);

    /**
     * Orders: every RMA and atomic issued on this endpoint after the fence becomes visible at the
     * target only after everything issued before it. Returns at once; completes nothing.
     */
    void fence();

    /** @return completes when everything issued before it is complete and visible at the target */
    CompletionStage<Void> flush();

    /** @return a snapshot of the lane table */
    List<LaneInfo> lanes();

    /**
     * @return what the endpoint and each of its lanes have done so far, and how long its flushes
     *     and strong fences took; cheap enough to read now and then, not per operation
     */
    EndpointStatistics statistics();

    /**
     * Fails the endpoint at once, without flushing: for a caller that knows the peer is gone (a
     * cluster member that was removed, say) and should not wait for the keepalive to find out.
     * Requests that were never sent, or that the lane withdrew before the peer took them, fail
     * with {@link EndpointFailedException}; requests that were sent and not answered fail with
     * {@link OutcomeUnknownException}, since the peer may have applied them; later operations fail
     * with {@link EndpointFailedException} naming {@code reason}. Does nothing to an endpoint that
     * failed or closed already; {@link #close()} still releases it.
     *
     * @param reason why, for the errors' messages
     */
    void abort(String reason);

    /**
     * A hint that the peer may be unreachable (from a failure detector outside the runtime, such as
     * a cluster's): every lane is probed now rather than after the keepalive interval of silence,
     * and a lane whose probe goes unanswered for the keepalive timeout fails as any other would.
     * Fails nothing by itself; does nothing if keepalive is off or the endpoint is not open.
     */
    void probeLanes();

    /** @return the address of the peer worker */
    WorkerAddress peer();

    /**
     * Closes the endpoint after flushing it; later operations fail with
     * {@link EndpointClosedException}, or, on an endpoint that had failed, with the
     * {@link EndpointFailedException} that says why.
     *
     * @return completes when the endpoint is closed: exceptionally with that flush's failure if an
     *     operation before it failed (an implicit put, say; the endpoint is closed all the same), or
     *     with a {@link FencelineException} if the endpoint did not confirm its close in time
     */
    CompletionStage<Void> close();
}
