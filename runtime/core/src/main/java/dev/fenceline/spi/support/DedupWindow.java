package dev.fenceline.spi.support;

import dev.fenceline.FencelineException;
import dev.fenceline.spi.TransportOp;
import java.util.Arrays;

/**
 * The target side of exactly-once for software protocols: what one origin endpoint's operations
 * did, by sequence number, so that a re-sent operation whose first copy arrived is answered with
 * the first copy's outcome instead of being applied again.
 *
 * <p>Exact, not a fixed-size guess: every operation carries the origin's <em>low-water mark</em>
 * ({@link TransportOp#lowWater()}), the smallest sequence number it has not seen completed. Below
 * it nothing can be re-sent, so entries there are dropped; at and above it every outcome is kept,
 * however far the newest operation has run ahead of a slow one (the storage grows up to
 * {@code maxSpread} entries). A copy below the mark is a stale copy of a completed operation and is
 * never applied.
 *
 * <p>Not thread-safe: one per origin endpoint, used under its owner's lock. {@link ExactlyOnce}
 * applies an operation through it.
 */
public final class DedupWindow {
    /** What {@link #lookup(long, long)} found. */
    public enum Seen {
        /** Never applied: apply it, then {@link #record} or {@link #recordFailure} the outcome. */
        NEW,
        /** Applied before: answer with {@link #result(long)}. */
        DUPLICATE,
        /** Refused before: answer with the same error, {@link #failure(long)}. */
        FAILED_BEFORE,
        /** Below the low-water mark: the origin saw it complete; a stale copy, never apply it. */
        STALE,
        /** More than {@code maxSpread} beyond the low-water mark: cannot be tracked, so not applied. */
        FULL
    }

    private static final byte UNKNOWN = 0;
    private static final byte APPLIED = 1;
    private static final byte FAILED = 2;
    private static final int INITIAL = 1024;

    private final int maxSpread;
    private byte[] states;
    private long[] results;
    private FencelineException[] failures;
    private int mask;
    /** The low-water mark: every slot holds a sequence in [base, base + capacity). */
    private long base;

    /** @param maxSpread the most sequence numbers tracked at once (at least 1) */
    public DedupWindow(int maxSpread) {
        if (maxSpread < 1) {
            throw new IllegalArgumentException("dedup window of " + maxSpread + " < 1");
        }
        this.maxSpread = maxSpread;
        allocate(Math.min(INITIAL, Integer.highestOneBit(Math.max(1, maxSpread - 1)) << 1));
    }

    private void allocate(int capacity) {
        states = new byte[capacity];
        results = new long[capacity];
        failures = new FencelineException[capacity];
        mask = capacity - 1;
    }

    /**
     * @param sequence the operation's sequence number (non-negative)
     * @param lowWater the low-water mark the operation carried (-1 if none: the mark stays)
     * @return what to do with it
     */
    public Seen lookup(long sequence, long lowWater) {
        advance(lowWater);
        if (sequence < base) {
            return Seen.STALE;
        }
        if (sequence - base >= maxSpread) {
            return Seen.FULL;
        }
        if (sequence - base >= states.length) {
            return Seen.NEW; // beyond anything stored: never seen
        }
        int i = (int) sequence & mask;
        return switch (states[i]) {
            case APPLIED -> Seen.DUPLICATE;
            case FAILED -> Seen.FAILED_BEFORE;
            default -> Seen.NEW;
        };
    }

    /**
     * @param sequence a sequence number {@link #lookup} found a duplicate
     * @return the result recorded for it
     */
    public long result(long sequence) {
        return results[(int) sequence & mask];
    }

    /**
     * @param sequence a sequence number {@link #lookup} found failed before
     * @return the error recorded for it
     */
    public FencelineException failure(long sequence) {
        return failures[(int) sequence & mask];
    }

    /**
     * @param sequence an operation {@link #lookup} found new, now applied
     * @param result its result (the fetched value, or 0)
     */
    public void record(long sequence, long result) {
        int i = slot(sequence);
        states[i] = APPLIED;
        results[i] = result;
        failures[i] = null;
    }

    /**
     * @param sequence an operation {@link #lookup} found new, refused by the target
     * @param error what the refusal said, to repeat it to a re-sent copy
     */
    public void recordFailure(long sequence, FencelineException error) {
        int i = slot(sequence);
        states[i] = FAILED;
        results[i] = 0;
        failures[i] = error;
    }

    /** @return the low-water mark */
    public long lowWater() {
        return base;
    }

    /** @return how many sequence numbers the storage spans now */
    public int capacity() {
        return states.length;
    }

    private int slot(long sequence) {
        if (sequence < base || sequence - base >= maxSpread) {
            throw new IllegalArgumentException("sequence " + sequence + " outside the window [" + base + ", "
                    + (base + maxSpread) + "): look it up first");
        }
        while (sequence - base >= states.length) {
            grow();
        }
        return (int) sequence & mask;
    }

    /** Doubles the storage, keeping every entry of [base, base + old capacity). */
    private void grow() {
        byte[] s = states;
        long[] r = results;
        FencelineException[] f = failures;
        int oldMask = mask;
        allocate(s.length * 2);
        for (long q = base; q < base + s.length; q++) {
            int from = (int) q & oldMask;
            int to = (int) q & mask;
            states[to] = s[from];
            results[to] = r[from];
            failures[to] = f[from];
        }
    }

    /** Drops everything below the new mark (the origin saw it complete). */
    private void advance(long lowWater) {
        if (lowWater <= base) {
            return;
        }
        if (lowWater - base >= states.length) {
            Arrays.fill(states, UNKNOWN);
            Arrays.fill(failures, null);
        } else {
            for (long q = base; q < lowWater; q++) {
                int i = (int) q & mask;
                states[i] = UNKNOWN;
                failures[i] = null;
            }
        }
        base = lowWater;
    }
}
