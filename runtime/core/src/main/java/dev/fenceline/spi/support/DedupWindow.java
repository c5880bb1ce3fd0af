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
 * <p>A window may draw its storage from a {@link Budget} shared with others (a target bounds what
 * one peer's windows hold together): an operation that would need more storage than the budget
 * has left is {@link Seen#OVER_BUDGET}, not applied.
 *
 * <p>Not thread-safe: one per origin endpoint, used under its owner's lock. {@link ExactlyOnce}
 * applies an operation through it.
 */
public final class DedupWindow {
    /** Storage shared by several windows, counted in entries. Thread-safe. */
    public interface Budget {
        /** No bound beyond each window's own {@code maxSpread}. */
        Budget UNBOUNDED = new Budget() {
            @Override
            public boolean reserve(int entries) {
                return true;
            }

            @Override
            public void release(int entries) {
            }

            @Override
            public String describe() {
                return "no budget";
            }
        };

        /**
         * @param entries entries a window wants to add
         * @return whether they were granted (and are now counted)
         */
        boolean reserve(int entries);

        /** @param entries entries a window gives back (it was dropped) */
        void release(int entries);

        /** @return what the budget is, for the refusal's message (its key and bound) */
        String describe();
    }

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
        FULL,
        /** Tracking it needs more storage than the window's {@link Budget} has left: not applied. */
        OVER_BUDGET,
        /** Its first copy is being applied now (see {@link #markRunning}): this copy must not run. */
        RUNNING
    }

    private static final byte UNKNOWN = 0;
    private static final byte APPLIED = 1;
    private static final byte FAILED = 2;
    private static final byte IN_PROGRESS = 3;
    /**
     * Entries a window starts with; it doubles as the spread of sequence numbers in flight needs.
     * Small: a target holds a window for every origin endpoint that ever sent it an operation, and
     * most carry a few at a time (1,024 entries were 12 KiB an endpoint).
     */
    static final int INITIAL = 16;

    private final int maxSpread;
    /** The storage it starts with, and the least it gives back down to. */
    private final int floor;
    private final Budget budget;
    private boolean released;
    private byte[] states;
    private long[] results;
    private FencelineException[] failures;
    private int mask;
    /** The low-water mark: every slot holds a sequence in [base, base + capacity). */
    private long base;
    /** One past the highest sequence number an outcome was stored for, at least {@link #base}. */
    private long top;

    /** @param maxSpread the most sequence numbers tracked at once (at least 1) */
    public DedupWindow(int maxSpread) {
        this(maxSpread, Budget.UNBOUNDED);
        allocate(initialCapacity(maxSpread));
    }

    private DedupWindow(int maxSpread, Budget budget) {
        if (maxSpread < 1) {
            throw new IllegalArgumentException("dedup window of " + maxSpread + " < 1");
        }
        this.maxSpread = maxSpread;
        this.floor = initialCapacity(maxSpread);
        this.budget = budget;
    }

    /**
     * A window whose storage counts against {@code budget}, from its first entries on.
     *
     * @param maxSpread the most sequence numbers tracked at once (at least 1)
     * @param budget what it may draw on
     * @return the window, or null if the budget cannot cover even its initial storage
     */
    public static DedupWindow within(int maxSpread, Budget budget) {
        int initial = initialCapacity(maxSpread);
        DedupWindow w = new DedupWindow(maxSpread, budget);
        if (!budget.reserve(initial)) {
            return null;
        }
        w.allocate(initial);
        return w;
    }

    private static int initialCapacity(int maxSpread) {
        return Math.min(INITIAL, Integer.highestOneBit(Math.max(1, maxSpread - 1)) << 1);
    }

    /** Gives this window's storage back to its budget; the window is not used again. Idempotent. */
    public void release() {
        if (!released) {
            released = true;
            budget.release(states.length);
        }
    }

    /** @return the budget this window draws on */
    public Budget budget() {
        return budget;
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
            // Beyond anything stored: never seen. Its storage is taken now, so the budget can refuse.
            return reserveFor(sequence) ? Seen.NEW : Seen.OVER_BUDGET;
        }
        int i = (int) sequence & mask;
        return switch (states[i]) {
            case APPLIED -> Seen.DUPLICATE;
            case FAILED -> Seen.FAILED_BEFORE;
            case IN_PROGRESS -> Seen.RUNNING;
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
     * For an operation applied asynchronously (an active-message handler on another thread): from
     * now until {@link #record} or {@link #recordFailure}, a copy of it is {@link Seen#RUNNING}.
     *
     * @param sequence an operation {@link #lookup} found new, whose application starts now
     */
    public void markRunning(long sequence) {
        int i = slot(sequence);
        states[i] = IN_PROGRESS;
        results[i] = 0;
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
        if (sequence - base >= states.length && !reserveFor(sequence)) {
            throw new IllegalStateException("sequence " + sequence + " is over the window's budget (" + budget.describe()
                    + "): look it up first");
        }
        if (sequence >= top) {
            top = sequence + 1;
        }
        return (int) sequence & mask;
    }

    /** Grows the storage until it holds {@code sequence}, if the budget grants the growth. */
    private boolean reserveFor(long sequence) {
        int capacity = states.length;
        while (sequence - base >= capacity) {
            capacity *= 2;
        }
        if (released || !budget.reserve(capacity - states.length)) {
            return false;
        }
        while (states.length < capacity) {
            grow();
        }
        return true;
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

    /**
     * Drops everything below the new mark (the origin saw it complete), and gives back storage grown
     * for a spread that has since closed: a mark that jumps past everything stored costs the initial
     * storage, not a pass over the grown one.
     */
    private void advance(long lowWater) {
        if (lowWater <= base) {
            return;
        }
        if (lowWater - base >= states.length) {
            jump(lowWater);
            return;
        }
        for (long q = base; q < lowWater; q++) {
            int i = (int) q & mask;
            states[i] = UNKNOWN;
            failures[i] = null;
        }
        base = lowWater;
        if (top < base) {
            top = base;
        }
        if (top - base <= states.length >> 2 && states.length > floor) {
            shrink();
        }
    }

    /** The mark moved past everything stored: nothing is kept, and grown storage goes back. */
    private void jump(long lowWater) {
        if (states.length > floor && !released) {
            budget.release(states.length - floor);
            allocate(floor);
        } else {
            Arrays.fill(states, UNKNOWN);
            Arrays.fill(failures, null);
        }
        base = lowWater;
        top = lowWater;
    }

    /**
     * What is in use fills a quarter of the storage or less: down to twice the use, never below the
     * floor, keeping every entry of [base, top), and the rest back to the budget. The gap between a
     * quarter and the growth at full keeps it from flapping.
     */
    private void shrink() {
        if (released) {
            return;
        }
        int capacity = states.length;
        long used = top - base;
        int next = floor;
        while (next < used * 2) {
            next *= 2;
        }
        byte[] s = states;
        long[] r = results;
        FencelineException[] f = failures;
        int oldMask = mask;
        allocate(next);
        for (long q = base; q < top; q++) {
            int from = (int) q & oldMask;
            int to = (int) q & mask;
            states[to] = s[from];
            results[to] = r[from];
            failures[to] = f[from];
        }
        budget.release(capacity - next);
    }
}
