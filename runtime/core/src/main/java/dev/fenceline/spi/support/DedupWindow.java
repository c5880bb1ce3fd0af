package dev.fenceline.spi.support;

import dev.fenceline.FencelineException;
import dev.fenceline.spi.TransportOp;
import java.util.function.LongSupplier;

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
 * <p>Every slot is tagged with the sequence number it holds, so moving the mark costs nothing
 * however far it moves (nothing below it needs clearing). Storage a closed spread no longer needs
 * goes back once the window has seen a quarter of it in lookups since its last resize, or a second
 * has passed since then: growing to a spread costs work in proportion to it, and a peer
 * alternating a far sequence number with a far mark would otherwise make the target grow and give
 * back the storage on every other frame. The second is for an origin whose sequence numbers mostly
 * go elsewhere (one-sided hardware lanes), whose window grows with few lookups.
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
    /** How long grown storage is kept, at least, when too few lookups have paid for giving it back. */
    static final long KEEP_GROWN_NANOS = 1_000_000_000L;

    private final int maxSpread;
    /** The storage it starts with, and the least it gives back down to. */
    private final int floor;
    private final Budget budget;
    private final LongSupplier clock;
    private boolean released;
    private byte[] states;
    /** The sequence number each slot's state belongs to: a slot tagged otherwise is {@link #UNKNOWN}. */
    private long[] tags;
    /** Results, made at the first that is not 0 (most operations are puts): null until then. */
    private long[] results;
    /** Errors, made at the first refusal: null until then. */
    private FencelineException[] failures;
    private int mask;
    /** The low-water mark: every slot holds a sequence in [base, base + capacity). */
    private long base;
    /** One past the highest sequence number an outcome was stored for, at least {@link #base}. */
    private long top;
    /** Lookups since the storage last changed size, up to its capacity: what pays for giving it back. */
    private int credit;
    /** When the storage last changed size ({@link #clock}). */
    private long resizedAt;
    /** Why operations not applied before are refused from now on, or null (any thread writes it). */
    private volatile String refusal;
    /**
     * Operations let run outside the lock ({@link ExactlyOnce#applyOutsideLock}) and not yet
     * recorded: changed under the lock, read without it by whoever decides the window may go.
     */
    private volatile int runningOutside;

    /** @param maxSpread the most sequence numbers tracked at once (at least 1) */
    public DedupWindow(int maxSpread) {
        this(maxSpread, Budget.UNBOUNDED, System::nanoTime);
        allocate(initialCapacity(maxSpread));
    }

    private DedupWindow(int maxSpread, Budget budget, LongSupplier clock) {
        if (maxSpread < 1) {
            throw new IllegalArgumentException("dedup window of " + maxSpread + " < 1");
        }
        this.maxSpread = maxSpread;
        this.floor = initialCapacity(maxSpread);
        this.budget = budget;
        this.clock = clock;
    }

    /**
     * A window whose storage counts against {@code budget}, from its first entries on.
     *
     * @param maxSpread the most sequence numbers tracked at once (at least 1)
     * @param budget what it may draw on
     * @return the window, or null if the budget cannot cover even its initial storage
     */
    public static DedupWindow within(int maxSpread, Budget budget) {
        return within(maxSpread, budget, System::nanoTime);
    }

    /**
     * @param maxSpread the most sequence numbers tracked at once (at least 1)
     * @param budget what it may draw on
     * @param clock nanoseconds, for how long grown storage has been kept
     * @return the window, or null if the budget cannot cover even its initial storage
     */
    static DedupWindow within(int maxSpread, Budget budget, LongSupplier clock) {
        int initial = initialCapacity(maxSpread);
        DedupWindow w = new DedupWindow(maxSpread, budget, clock);
        if (!budget.reserve(initial)) {
            return null;
        }
        w.allocate(initial);
        return w;
    }

    private static int initialCapacity(int maxSpread) {
        return Math.min(INITIAL, Integer.highestOneBit(Math.max(1, maxSpread - 1)) << 1);
    }

    /**
     * Runs {@code resume} once the outcome of {@code sequence}, whose first copy runs now
     * ({@link Seen#RUNNING}), is recorded or given up ({@link ExactlyOnce#finish}): for a copy that
     * waits for its first copy's outcome instead of being refused. It runs on the thread that records
     * the outcome, under this window's lock, so it must only hand the copy back to its own thread.
     * Rare (a copy re-sent while its first one runs), so kept in a list made on first use.
     *
     * @param sequence an operation {@link #lookup} found running (the caller holds the lock)
     * @param resume what to run once its outcome is known
     */
    public void whenFinished(long sequence, Runnable resume) {
        if (waiters == null) {
            waiters = new java.util.ArrayList<>(2);
        }
        waiters.add(new Waiter(sequence, java.util.Objects.requireNonNull(resume, "resume")));
    }

    /** The outcome of {@code sequence} is known: runs what waited for it (the caller holds the lock). */
    void finished(long sequence) {
        if (waiters == null) {
            return;
        }
        for (int i = 0; i < waiters.size(); ) {
            Waiter next = waiters.get(i);
            if (next.sequence() == sequence) {
                waiters.remove(i);
                next.resume().run();
            } else {
                i++;
            }
        }
        if (waiters.isEmpty()) {
            waiters = null;
        }
    }

    /** @return how many copies wait for a first copy's outcome (the caller holds the lock) */
    public int waiting() {
        return waiters == null ? 0 : waiters.size();
    }

    private record Waiter(long sequence, Runnable resume) {
    }

    /** Copies waiting for a running operation's outcome ({@link #whenFinished}); null while none. */
    private java.util.ArrayList<Waiter> waiters;

    /** An operation begins to run outside the lock (the caller holds it). */
    void runningOutsideStarted() {
        runningOutside++;
    }

    /** That operation's outcome is recorded, or it was given up (the caller holds the lock). */
    void runningOutsideEnded() {
        runningOutside--;
    }

    /**
     * @return whether an operation it let run outside its lock has not returned yet: the window
     *     must stay, or a copy sent meanwhile would find a fresh window and run again (any thread)
     */
    public boolean running() {
        return runningOutside > 0;
    }

    /** Gives this window's storage back to its budget; the window is not used again. Idempotent. */
    public void release() {
        if (!released) {
            released = true;
            budget.release(states.length);
        }
    }

    /**
     * Refuses every operation this window has not applied before, from now on: its origin's worker
     * was declared gone. A copy of one applied before still gets its outcome. Any thread; the
     * lock is not needed (an operation being applied meanwhile completes).
     *
     * @param why why, for the refusal
     */
    public void refuse(String why) {
        refusal = java.util.Objects.requireNonNull(why, "why");
    }

    /** @return why new operations are refused, or null if they are not */
    public String refusal() {
        return refusal;
    }

    /** @return the budget this window draws on */
    public Budget budget() {
        return budget;
    }

    private void allocate(int capacity) {
        states = new byte[capacity];
        tags = new long[capacity];
        results = null;
        failures = null;
        mask = capacity - 1;
    }

    /**
     * @param sequence the operation's sequence number (non-negative)
     * @param lowWater the low-water mark the operation carried (-1 if none: the mark stays)
     * @return what to do with it
     */
    public Seen lookup(long sequence, long lowWater) {
        if (credit < states.length) {
            credit++;
        }
        advance(lowWater);
        if (states.length > floor) {
            giveBack();
        }
        if (sequence < base) {
            return Seen.STALE;
        }
        if (sequence - base >= maxSpread || sequence == Long.MAX_VALUE) {
            return Seen.FULL; // the last number has no "one past it" to bound what is stored
        }
        if (sequence - base >= states.length) {
            // Beyond anything stored: never seen. Its storage is taken now, so the budget can refuse.
            return reserveFor(sequence) ? Seen.NEW : Seen.OVER_BUDGET;
        }
        int i = (int) sequence & mask;
        if (tags[i] != sequence) {
            return Seen.NEW; // the slot holds an older sequence number's outcome, or none
        }
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
        return results == null ? 0 : results[(int) sequence & mask];
    }

    /**
     * @param sequence a sequence number {@link #lookup} found failed before
     * @return the error recorded for it
     */
    public FencelineException failure(long sequence) {
        return failures == null ? null : failures[(int) sequence & mask];
    }

    /**
     * @param sequence an operation {@link #lookup} found new, now applied
     * @param result its result (the fetched value, or 0)
     */
    public void record(long sequence, long result) {
        int i = slot(sequence);
        tags[i] = sequence;
        states[i] = APPLIED;
        setResult(i, result);
        setFailure(i, null);
    }

    /**
     * For an operation applied asynchronously (an active-message handler on another thread): from
     * now until {@link #record} or {@link #recordFailure}, a copy of it is {@link Seen#RUNNING}.
     *
     * @param sequence an operation {@link #lookup} found new, whose application starts now
     */
    public void markRunning(long sequence) {
        int i = slot(sequence);
        tags[i] = sequence;
        states[i] = IN_PROGRESS;
        setResult(i, 0);
        setFailure(i, null);
    }

    /**
     * @param sequence an operation {@link #lookup} found new, refused by the target
     * @param error what the refusal said, to repeat it to a re-sent copy
     */
    public void recordFailure(long sequence, FencelineException error) {
        int i = slot(sequence);
        tags[i] = sequence;
        states[i] = FAILED;
        setResult(i, 0);
        setFailure(i, error);
    }

    private void setResult(int slot, long result) {
        if (results == null) {
            if (result == 0) {
                return;
            }
            results = new long[states.length];
        }
        results[slot] = result;
    }

    private void setFailure(int slot, FencelineException error) {
        if (failures == null) {
            if (error == null) {
                return;
            }
            failures = new FencelineException[states.length];
        }
        failures[slot] = error;
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
        if (sequence < base || sequence - base >= maxSpread || sequence == Long.MAX_VALUE) {
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
        resize(capacity);
        return true;
    }

    /**
     * Drops everything below the new mark: the origin saw it complete, and a slot tagged below it is
     * never asked for again, so nothing needs clearing however far the mark moves.
     */
    private void advance(long lowWater) {
        if (lowWater > base) {
            base = lowWater;
            if (top < base) {
                top = base;
            }
        }
    }

    /**
     * Gives back storage grown for a spread that has since closed (what is in use fills a quarter of
     * it or less), down to twice the use, once the lookups since the last resize have paid for it or
     * it has been kept for {@link #KEEP_GROWN_NANOS}.
     */
    private void giveBack() {
        int capacity = states.length;
        if (top - base > capacity >> 2 || released
                || credit < capacity >> 2 && clock.getAsLong() - resizedAt < KEEP_GROWN_NANOS) {
            return;
        }
        int next = floor;
        while (next < (top - base) * 2) {
            next *= 2;
        }
        if (next < capacity) {
            resize(next);
            budget.release(capacity - next);
        }
    }

    /**
     * New storage of {@code capacity} slots holding every outcome of [base, top) the old one held;
     * the lookups that paid for it are spent. The gap between shrinking at a quarter full and
     * growing when full keeps the size from flapping.
     */
    private void resize(int capacity) {
        byte[] s = states;
        long[] t = tags;
        long[] r = results;
        FencelineException[] f = failures;
        int oldMask = mask;
        allocate(capacity);
        for (long q = base; q < top; q++) {
            int from = (int) q & oldMask;
            if (t[from] == q && s[from] != UNKNOWN) {
                int to = (int) q & mask;
                states[to] = s[from];
                tags[to] = q;
                if (r != null) {
                    setResult(to, r[from]);
                }
                if (f != null) {
                    setFailure(to, f[from]);
                }
            }
        }
        credit = 0;
        resizedAt = clock.getAsLong();
    }
}
