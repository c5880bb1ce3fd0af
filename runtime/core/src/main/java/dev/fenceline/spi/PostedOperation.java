package dev.fenceline.spi;

import dev.fenceline.FencelineException;

/**
 * An operation a calling thread posted on a {@link DirectPosting} lane: what to send, and where its
 * outcome goes. The lane calls exactly one of {@link #completed}, {@link #failed} and
 * {@link #returned} for each operation it took, once.
 */
public interface PostedOperation {
    /** @return what to send (its token is set; {@link #sequence} identifies it) */
    TransportOp op();

    /**
     * @return whether nobody waits for this operation's own answer (an implicit operation: only a
     *     flush or the endpoint's window reads it), so that a target may hold the answer back for a
     *     moment to send several together ({@link DirectAccess#answersWanted} asks for them)
     */
    default boolean answerMayWait() {
        return false;
    }

    /**
     * Numbers the operation for exactly-once: called by the lane under its own lock, in the order in
     * which it writes its operations, before anything is sent. On success the operation is
     * identified ({@link TransportOp#identify}) with the endpoint's id and the number, and the lane
     * sets the low-water mark from what it still has unanswered.
     *
     * @return the sequence number, or -1 if the endpoint's grant ended meanwhile: send nothing
     */
    long sequence();

    /**
     * The target answered: applied, with the fetched value for atomics (sign-extended for width 4).
     * Called on the lane's reading thread, which must not block: the endpoint hands the user's
     * callbacks elsewhere.
     *
     * @param value the fetched value, or 0
     */
    void completed(long value);

    /**
     * The target refused it (a bad key, a closed region): not applied.
     *
     * @param error the target's error
     */
    void failed(FencelineException error);

    /**
     * The lane ended before the answer came: the endpoint takes the operation back, to send it again
     * (under the same sequence number) or to report its outcome. Called in posting order, before
     * the lane reports its failure to its listener.
     */
    void returned();
}
