package dev.fenceline.spi;

import dev.fenceline.AtomicOp;
import dev.fenceline.RemoteKey;
import java.nio.ByteBuffer;

/**
 * A lane that can perform some operations itself, on the calling thread, complete and remotely
 * visible on return (a store into a shared mapping, a VarHandle atomic on it): the endpoint's fast
 * path by grant (docs/architecture.md). Called from any thread while the endpoint's grant is valid, that is
 * while nothing else of the endpoint is outstanding; thread-safe.
 */
public interface DirectAccess {
    /**
     * @param key the region's key
     * @param address the first remote byte
     * @param src the bytes (position to limit; not moved)
     * @return true if done; false if this lane cannot do it directly now (take the normal path)
     * @throws dev.fenceline.RemoteAccessException if the key, range or region is bad (nothing written)
     */
    boolean putNow(RemoteKey key, long address, ByteBuffer src);

    /**
     * @param key the region's key
     * @param address an aligned remote address
     * @param op a postable operation
     * @param width 4 or 8
     * @param operand the operand
     * @return true if done; false if this lane cannot do it directly now
     * @throws dev.fenceline.RemoteAccessException if the key, range, alignment or region is bad
     */
    boolean atomicPostNow(RemoteKey key, long address, AtomicOp op, int width, long operand);

    /**
     * @param key the region's key
     * @param address the first remote byte
     * @param dst receives {@code dst.remaining()} bytes at its position (not moved)
     * @return true if done; false if this lane cannot do it directly now
     * @throws dev.fenceline.RemoteAccessException if the key, range or region is bad
     */
    boolean getNow(RemoteKey key, long address, ByteBuffer dst);

    /**
     * A fetching atomic, or a compare-and-swap when {@code op} is null.
     *
     * @param key the region's key
     * @param address an aligned remote address
     * @param op the operation, or null for compare-and-swap
     * @param width 4 or 8
     * @param operand the operand (compare-and-swap: the desired value)
     * @param compare compare-and-swap's expected value
     * @return the previous value (sign-extended for width 4), or null if this lane cannot do it now
     * @throws dev.fenceline.RemoteAccessException if the key, range, alignment or region is bad
     */
    Long atomicFetchNow(RemoteKey key, long address, AtomicOp op, int width, long operand, long compare);

    /**
     * Writes an active message into the peer's queue on the calling thread. Unlike the operations
     * above it is not complete on return: the lane counts it as unanswered (a flush of the lane and
     * any later direct store wait for it) and tells {@code answers} when the peer's handler has run,
     * or that the lane died first. Header and payload are copied before return. A lane offers it
     * only where its messages reach the peer in the order they were queued, whichever thread queued
     * them.
     *
     * @param id the handler id
     * @param header the header (position to limit; not moved)
     * @param payload the payload (position to limit; not moved)
     * @param origin the endpoint's id, as the lane's other messages carry it
     * @param answers numbers the message ({@link DirectAnswers#queued}) and takes its answer; the same
     *     for every call on one lane
     * @return true if queued; false if this lane cannot do it now (take the normal path)
     * @throws dev.fenceline.FencelineException if the message can never go on this lane (too large)
     */
    default boolean activeMessageNow(int id, ByteBuffer header, ByteBuffer payload, long origin,
            DirectAnswers answers) {
        return false;
    }

    /**
     * A flush waits for the answers to the active messages sent directly on this lane (and to the
     * operations calling threads posted on it, {@link DirectPosting}): a lane whose target may hold
     * such answers back for a moment, to send several in one message, asks for them now. Any thread; returns at once, and does nothing where nothing can be held.
     *
     * @return false if it could not ask now (no room): the caller may ask again
     */
    default boolean answersWanted() {
        return true;
    }
}
