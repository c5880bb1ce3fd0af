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
     * The peer's handler ran.
     *
     * @param number what the message was sent with
     * @param error why it failed (the handler threw, no handler), or null
     */
    void answered(long number, FencelineException error);

    /**
     * The lane died with {@code count} messages unanswered: each may or may not have reached its
     * handler, and no answer will come.
     *
     * @param count how many
     * @param error what the next flush reports
     */
    void abandoned(int count, FencelineException error);
}
