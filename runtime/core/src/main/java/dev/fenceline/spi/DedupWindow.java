package dev.fenceline.spi;

/**
 * The target side of exactly-once for software protocols: remembers the results of the last
 * {@code capacity} operations one origin endpoint applied, by sequence number, so that a re-sent
 * operation whose first copy arrived is answered with the original result instead of being applied
 * again. Not thread-safe: one per origin endpoint, used by one thread at a time.
 */
public final class DedupWindow {
    /** What {@link #lookup(long)} found. */
    public enum Seen {
        /** Never applied: apply it and {@link #record(long, long)} the result. */
        NEW,
        /** Already applied: answer with {@link #result(long)}. */
        DUPLICATE,
        /** Older than the window: its fate cannot be told, never apply it blindly. */
        TOO_OLD
    }

    private final long[] sequences;
    private final long[] results;
    private long highest = -1;

    /** @param capacity how many recent operations are remembered (at least 1) */
    public DedupWindow(int capacity) {
        if (capacity < 1) {
            throw new IllegalArgumentException("dedup window capacity " + capacity + " < 1");
        }
        sequences = new long[capacity];
        results = new long[capacity];
        java.util.Arrays.fill(sequences, -1);
    }

    /**
     * @param sequence the operation's sequence number (non-negative)
     * @return whether it is new, a duplicate, or too old to tell
     */
    public Seen lookup(long sequence) {
        int slot = (int) (sequence % sequences.length);
        if (sequences[slot] == sequence) {
            return Seen.DUPLICATE;
        }
        return highest - sequence >= sequences.length ? Seen.TOO_OLD : Seen.NEW;
    }

    /**
     * @param sequence a sequence number that {@link #lookup(long)} found a duplicate
     * @return the result recorded for it
     */
    public long result(long sequence) {
        return results[(int) (sequence % sequences.length)];
    }

    /**
     * @param sequence the applied operation's sequence number
     * @param result its result (the fetched value, or 0)
     */
    public void record(long sequence, long result) {
        int slot = (int) (sequence % sequences.length);
        sequences[slot] = sequence;
        results[slot] = result;
        highest = Math.max(highest, sequence);
    }
}
