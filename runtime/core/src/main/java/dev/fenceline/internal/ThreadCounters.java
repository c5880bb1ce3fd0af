package dev.fenceline.internal;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.util.Arrays;

/**
 * Several exact counters that many threads add to, kept per thread: each thread adds to a row of its
 * own with plain stores (only its owner writes a row), and {@link #sum()} adds the rows up (a
 * worker's running totals).
 *
 * <p>Like {@link ThreadCounter}, a registration folds the rows of threads that have ended into one
 * total; unlike it, a thread finds its row through a thread-local (one per counters object, of which
 * a worker has one, not one per endpoint). A counter may be a maximum instead of a sum: its rows
 * and the folded total are then combined by taking the largest.
 */
public final class ThreadCounters {
    private static final VarHandle VALUES = MethodHandles.arrayElementVarHandle(long[].class);
    private static final Row[] NONE = new Row[0];

    /** One thread's counts. */
    public static final class Row {
        private final Thread owner;
        private final long[] values;
        private final boolean[] maxima;

        Row(Thread owner, int width, boolean[] maxima) {
            this.owner = owner;
            this.values = new long[width];
            this.maxima = maxima;
        }

        /** @return whether the calling thread may add to this row (it is the row's owner) */
        public boolean mine() {
            return owner == Thread.currentThread();
        }

        /**
         * Owner only.
         *
         * @param i the counter
         * @param n what to add (negative takes back what the same counter had counted)
         */
        public void add(int i, long n) {
            VALUES.setRelease(values, i, (long) VALUES.get(values, i) + n);
        }

        /**
         * Owner only.
         *
         * @param i a counter that is a maximum
         * @param v a value it may rise to
         */
        public void max(int i, long v) {
            if (v > (long) VALUES.get(values, i)) {
                VALUES.setRelease(values, i, v);
            }
        }
    }

    private final int width;
    private final boolean[] maxima;
    private final ThreadLocal<Row> mine = ThreadLocal.withInitial(this::register);
    /** Copied on write, under this. */
    private volatile Row[] rows = NONE;
    /** Written under this: what the rows of ended threads had counted. */
    private final long[] retired;
    /**
     * Odd while a registration folds ended threads' rows into {@link #retired} (written under this):
     * {@link #sum()} reads without the lock, and again if a fold ran meanwhile, so that a row is never
     * counted both in its place and in the retired total, nor in neither.
     */
    private volatile int folds;

    /**
     * @param width how many counters
     * @param maxima the counters that are maxima rather than sums
     */
    public ThreadCounters(int width, int... maxima) {
        this.width = width;
        this.maxima = new boolean[width];
        for (int m : maxima) {
            this.maxima[m] = true;
        }
        this.retired = new long[width];
    }

    /** @return the calling thread's row, made at its first call */
    public Row row() {
        return mine.get();
    }

    private synchronized Row register() {
        folds++; // odd: a fold is under way
        try {
            Row[] now = rows;
            Row[] next = new Row[now.length + 1];
            int live = 0;
            for (Row r : now) {
                // A thread that has ended wrote its row for the last time before isAlive() turned false.
                if (r.owner.isAlive()) {
                    next[live++] = r;
                } else {
                    combine(retired, r);
                }
            }
            Row r = new Row(Thread.currentThread(), width, maxima);
            next[live++] = r;
            rows = live == next.length ? next : Arrays.copyOf(next, live);
            return r;
        } finally {
            folds++;
        }
    }

    private void combine(long[] into, Row r) {
        for (int i = 0; i < width; i++) {
            long v = (long) VALUES.getAcquire(r.values, i);
            into[i] = maxima[i] ? Math.max(into[i], v) : into[i] + v;
        }
    }

    /**
     * Reads without a lock.
     *
     * @return each counter's total over every thread (a snapshot: additions racing with it may be missed)
     */
    public long[] sum() {
        while (true) {
            int before = folds;
            if ((before & 1) == 0) {
                long[] s = retired.clone();
                for (Row r : rows) {
                    combine(s, r);
                }
                if (folds == before) {
                    return s;
                }
            }
            Thread.onSpinWait(); // a registration is folding: it takes microseconds
        }
    }
}
