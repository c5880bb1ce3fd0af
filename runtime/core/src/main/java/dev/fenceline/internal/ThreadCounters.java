package dev.fenceline.internal;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.util.Arrays;

/**
 * Several exact counters that many threads add to, kept per thread: each thread adds to a row of its
 * own with plain stores (only its owner writes a row), and {@link #sum()} adds the rows up (a
 * worker's running totals). A counter may be a maximum instead of a sum: its rows are then combined
 * by taking the largest.
 *
 * <p>A thread finds its row through a thread-local (one per counters object, of which a worker has
 * one, not one per endpoint). A registration folds the rows of threads that have ended into one
 * total; the rows and that total are published together, as one immutable state swapped in by a
 * compare-and-set, so that a sum reads them once, without a lock or a retry, and never counts a row
 * both in its place and in the total.
 */
public final class ThreadCounters {
    private static final VarHandle VALUES = MethodHandles.arrayElementVarHandle(long[].class);
    private static final VarHandle STATE = VarHandles.field(MethodHandles.lookup(), "state", State.class);

    /** One thread's counts. */
    public static final class Row {
        private final Thread owner;
        private final long[] values;

        Row(Thread owner, int width) {
            this.owner = owner;
            this.values = new long[width];
        }

        /** @return whether the calling thread may add to this row (it is the row's owner) */
        public boolean mine() {
            return owner == Thread.currentThread();
        }

        /**
         * Owner only; on a counter that is a sum.
         *
         * @param i the counter
         * @param n what to add (negative takes back what the same counter had counted)
         */
        public void add(int i, long n) {
            VALUES.setRelease(values, i, (long) VALUES.get(values, i) + n);
        }

        /**
         * Owner only; on a counter that is a maximum.
         *
         * @param i the counter
         * @param v a value it may rise to
         */
        public void max(int i, long v) {
            if (v > (long) VALUES.get(values, i)) {
                VALUES.setRelease(values, i, v);
            }
        }
    }

    /**
     * The live threads' rows and what the rows of ended threads had counted; never changed once
     * published.
     */
    private record State(Row[] rows, long[] retired) {
    }

    private final int width;
    private final boolean[] maxima;
    private final ThreadLocal<Row> rowOfThread = ThreadLocal.withInitial(this::register);
    /** Replaced by a registration (compare-and-set: registrations racing each other retry). */
    private volatile State state;

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
        this.state = new State(new Row[0], new long[width]);
    }

    /** @return the calling thread's row, made at its first call */
    public Row row() {
        return rowOfThread.get();
    }

    private Row register() {
        Row mine = new Row(Thread.currentThread(), width);
        while (true) {
            State now = state;
            long[] retired = now.retired().clone();
            Row[] next = new Row[now.rows().length + 1];
            int live = 0;
            for (Row r : now.rows()) {
                // A thread that has ended wrote its row for the last time before isAlive() turned false.
                if (r.owner.isAlive()) {
                    next[live++] = r;
                } else {
                    combine(retired, r);
                }
            }
            next[live++] = mine;
            if (STATE.compareAndSet(this, now, new State(live == next.length ? next : Arrays.copyOf(next, live),
                    retired))) {
                return mine;
            }
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
        State s = state;
        long[] total = s.retired().clone();
        for (Row r : s.rows()) {
            combine(total, r);
        }
        return total;
    }
}
