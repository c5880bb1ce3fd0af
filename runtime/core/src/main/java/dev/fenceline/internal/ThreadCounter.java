package dev.fenceline.internal;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;

/**
 * An exact counter for a path that many threads take at a high rate: each thread counts in a cell
 * of its own with a plain store (only its owner writes a cell), and {@link #sum()} adds the cells
 * up. Unlike a {@code LongAdder}, an increment carries no locked instruction, whose wait for the
 * store buffer cost more than the rest of an 8-byte put on the fast path (JFR). When a new thread
 * registers, the cells of threads that have ended are folded into one total and dropped, so a
 * thread-per-task application does not grow the counter without bound.
 *
 * <p>A thread finds its cell by the last one used, else by a scan of the (few) cells: no thread-local,
 * whose entry in every counting thread's map and whose list would cost each endpoint about 100 bytes.
 * A counter may also count into a parent counter (an endpoint's into its worker's total): each cell
 * holds its thread's cell there, so that the second count is one more plain store, with no lookup.
 */
public final class ThreadCounter {
    private static final VarHandle VALUE = Cell.VALUE;
    private static final VarHandle LAST = VarHandles.field(MethodHandles.lookup(), "last", Cell.class);
    private static final Cell[] NONE = new Cell[0];

    /** One thread's count. */
    private static final class Cell {
        static final VarHandle VALUE = VarHandles.field(MethodHandles.lookup(), "value", long.class);
        final Thread owner;
        /** The owner's cell in the counter this one also counts into, or null. */
        final Cell parent;
        @SuppressWarnings("unused") // through VALUE
        private long value;

        Cell(Thread owner, Cell parent) {
            this.owner = owner;
            this.parent = parent;
        }
    }

    /** The counter this one also counts into, or null. */
    private final ThreadCounter parent;

    /** Copied on write, under this: a thread registers once (or after the fold dropped its cell, never). */
    private volatile Cell[] cells = NONE;
    /** Written under this: what the cells of ended threads had counted. */
    private volatile long retired;
    /**
     * Odd while a registration folds ended threads' cells into {@link #retired} (written under
     * this): {@link #sum()} reads without the lock, and again if a fold ran meanwhile, so a cell is
     * never counted both in its place and in the retired total.
     */
    private volatile int folds;
    /**
     * The cell used last, so that a thread calling again finds its own without a scan. Read and
     * written plainly (opaque): a stale value only costs that scan, and a cell's owner is final, so a
     * racy read never yields another thread's cell as its own.
     */
    @SuppressWarnings("unused") // through LAST
    private Cell last;

    /** A counter of its own. */
    public ThreadCounter() {
        this(null);
    }

    /**
     * @param parent a counter that every increment also counts into, or null; it is meant to be
     *     counted only through its children (incremented itself too, it stays exact, but its
     *     last-used cell then passes between the threads of all its children)
     */
    public ThreadCounter(ThreadCounter parent) {
        this.parent = parent;
    }

    private Cell find(Thread t) {
        for (Cell c : cells) {
            if (c.owner == t) {
                return c;
            }
        }
        return register(t);
    }

    private synchronized Cell register(Thread t) {
        // Everything that may fail (allocation, the parent's registration) before the fold starts,
        // so that a fold either happens whole or not at all.
        Cell mine = new Cell(t, parent == null ? null : parent.find(t)); // t is the calling thread
        Cell[] now = cells;
        Cell[] next = new Cell[now.length + 1];
        long ended = 0;
        int live = 0;
        for (Cell c : now) {
            if (c.owner == t) {
                return c; // registered between the scan and the lock: never by another thread
            }
            // A thread that has ended wrote its cell for the last time before isAlive() turned false.
            if (c.owner.isAlive()) {
                next[live++] = c;
            } else {
                ended += (long) VALUE.getAcquire(c);
            }
        }
        next[live++] = mine;
        Cell[] published = live == next.length ? next : java.util.Arrays.copyOf(next, live);
        folds++; // odd: a fold is under way
        retired += ended;
        cells = published;
        folds++;
        return mine;
    }

    /** Adds one for the calling thread. */
    public void increment() {
        Thread t = Thread.currentThread();
        Cell c = (Cell) LAST.getOpaque(this);
        if (c == null || c.owner != t) {
            c = find(t);
            LAST.setOpaque(this, c);
        }
        VALUE.setRelease(c, (long) VALUE.getOpaque(c) + 1);
        Cell p = c.parent;
        if (p != null) {
            VALUE.setRelease(p, (long) VALUE.getOpaque(p) + 1);
        }
    }

    /**
     * Reads without a lock (statistics walk every endpoint's counter once a second: a lock is a write
     * to each counter's line).
     *
     * @return the total over every thread (a snapshot: increments racing with it may be missed)
     */
    public long sum() {
        while (true) {
            int before = folds;
            if ((before & 1) == 0) {
                long s = retired;
                for (Cell c : cells) {
                    s += (long) VALUE.getAcquire(c);
                }
                if (folds == before) {
                    return s;
                }
            }
            Thread.onSpinWait(); // a registration is folding: it takes microseconds
        }
    }
}
