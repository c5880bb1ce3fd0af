package dev.fenceline.spi;

import dev.fenceline.FencelineException;

/**
 * Where a lane reports the answers to active messages sent on the fast path
 * ({@link DirectAccess#activeMessageNow}): the endpoint counts them, so that a flush waits for every
 * one sent before it, and keeps each failure for the next flush to report. Thread-safe; transports
 * call it from their polling threads, without the endpoint actor in between.
 */
public interface DirectAnswers {
    /**
     * The lane is queueing a message: called once the message is sure to reach the peer's queue,
     * in queue order and before its answer can be reported (the lane orders the two).
     *
     * @return the message's index, which names it in {@link #answered}
     */
    long queued();

    /**
     * The peer's handler ran. A lane reports its messages' answers in the order it queued them.
     *
     * @param index what {@link #queued} returned for the message
     * @param error why it failed (the handler threw, no handler), or null
     */
    void answered(long index, FencelineException error);

    /**
     * The lane died with {@code count} messages unanswered: each may or may not have reached its
     * handler, and no answer will come.
     *
     * @param count how many
     * @param error what the next flush reports
     */
    void abandoned(int count, FencelineException error);
}
