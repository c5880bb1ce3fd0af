package dev.fenceline.spi.support;

import dev.fenceline.spi.LaneListener;

/**
 * Completions that a lane's event loop or polling thread gathers during one pass, reported to the
 * endpoint in one message ({@link LaneListener#onCompletedBatch}) instead of one each. Used by one
 * thread at a time. It starts small and doubles while passes fill it, up to its most, so that an
 * idle lane (of ten thousand) holds a few words and a busy one batches as many as it may; it
 * allocates nothing once it has reached its most.
 */
public final class CompletionBatch {
    private final int capacity;
    private long[] tokens;
    private long[] values;
    private int size;

    /** @param capacity the most completions gathered before they are reported anyway */
    public CompletionBatch(int capacity) {
        this(capacity, capacity);
    }

    /**
     * @param initial room at first (0: none until the first completion)
     * @param capacity the most completions gathered before they are reported anyway
     */
    public CompletionBatch(int initial, int capacity) {
        if (initial < 0 || capacity < 1 || initial > capacity) {
            throw new IllegalArgumentException("a batch of " + initial + " growing to " + capacity);
        }
        this.capacity = capacity;
        this.tokens = initial == 0 ? NONE : new long[initial];
        this.values = initial == 0 ? NONE : new long[initial];
    }

    private static final long[] NONE = new long[0];

    /**
     * @param token a completed operation's token
     * @param value its fetched value, or 0
     * @return true if the batch is full now: report it before adding more
     */
    public boolean add(long token, long value) {
        if (size == tokens.length) { // never at the most: a full batch was reported
            int grown = Math.min(capacity, Math.max(1, tokens.length * 2));
            tokens = java.util.Arrays.copyOf(tokens, grown);
            values = java.util.Arrays.copyOf(values, grown);
        }
        tokens[size] = token;
        values[size] = value;
        return ++size == capacity;
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
