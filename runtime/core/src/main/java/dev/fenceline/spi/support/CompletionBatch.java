package dev.fenceline.spi.support;

import dev.fenceline.spi.LaneListener;

/**
 * Completions that a lane's event loop or polling thread gathers during one pass, reported to the
 * endpoint in one message ({@link LaneListener#onCompletedBatch}) instead of one each. Used by one
 * thread at a time; allocates nothing after construction.
 */
public final class CompletionBatch {
    private final long[] tokens;
    private final long[] values;
    private int size;

    /** @param capacity the most completions gathered before they are reported anyway */
    public CompletionBatch(int capacity) {
        this.tokens = new long[capacity];
        this.values = new long[capacity];
    }

    /**
     * @param token a completed operation's token
     * @param value its fetched value, or 0
     * @return true if the batch is full now: report it before adding more
     */
    public boolean add(long token, long value) {
        tokens[size] = token;
        values[size] = value;
        return ++size == tokens.length;
    }

    /**
     * Reports what was gathered and starts a new batch.
     *
     * @param listener the endpoint's listener, or null to drop the batch (no endpoint wants it)
     */
    public void report(LaneListener listener) {
        int n = size;
        if (n == 0) {
            return;
        }
        size = 0;
        if (listener != null) {
            listener.onCompletedBatch(tokens, values, n);
        }
    }

    /** @return how many completions wait to be reported */
    public int size() {
        return size;
    }
}
