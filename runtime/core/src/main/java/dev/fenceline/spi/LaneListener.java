package dev.fenceline.spi;

import dev.fenceline.FencelineException;

/**
 * Receives one lane connection's events. Implementations only send a message to their endpoint
 * actor, so transports may call them from any thread.
 */
public interface LaneListener {
    /**
     * @param token the operation's token
     * @param value the fetched value for atomics, 0 otherwise
     */
    void onCompleted(long token, long value);

    /**
     * Several operations completed: one message to the endpoint instead of one each. Transports
     * that poll or read in batches call this at the end of a batch.
     *
     * @param tokens the operations' tokens; the caller may reuse the array after the call
     * @param values their fetched values (0 for operations that fetch nothing); reused likewise
     * @param count how many entries are valid
     */
    default void onCompletedBatch(long[] tokens, long[] values, int count) {
        for (int i = 0; i < count; i++) {
            onCompleted(tokens[i], values[i]);
        }
    }

    /**
     * @param token the operation's token
     * @param error why it failed (a remote access error, an unknown handler, ...)
     */
    void onFailed(long token, FencelineException error);

    /** @param token the flush's token */
    void onFlushed(long token);

    /**
     * A flush could not complete: what was posted before it may or may not be visible.
     *
     * @param token the flush's token
     * @param error why
     */
    void onFlushFailed(long token, FencelineException error);

    /** The lane has room again after a {@link PostStatus#NO_RESOURCE}. */
    void onReady();

    /** @param cause why the connection is dead; no further events follow */
    void onLaneFailed(Throwable cause);

    /**
     * The transport put a new connection behind this lane's slot (the old one is gone, without a
     * failure report). Bind the new connection before use.
     *
     * @param replacement the new connection
     */
    void onReplaced(LaneConnection replacement);

    /**
     * The transport reconnected this failed lane.
     *
     * @param connection the new connection
     */
    void onRecovered(LaneConnection connection);

    /**
     * The transport opened another lane to the same peer for this lane's endpoint.
     *
     * @param connection the new lane's connection
     */
    void onLaneAdded(LaneConnection connection);
}
