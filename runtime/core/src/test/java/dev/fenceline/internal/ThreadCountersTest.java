package dev.fenceline.internal;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** Exact sums and maxima under concurrent threads and threads that end; counters that count into a parent. */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class ThreadCountersTest {
    private static final int SUM = 0;
    private static final int MAX = 1;

    @Test
    void sumsEveryThreadsCountsAndKeepsTheLargestOfAMaximum() throws Exception {
        ThreadCounters counts = new ThreadCounters(2, MAX);
        ThreadCounter parent = new ThreadCounter();
        int threads = 4;
        int each = 200_000;
        CyclicBarrier start = new CyclicBarrier(threads);
        List<Thread> all = new ArrayList<>();
        // Each thread also counts through an endpoint-like counter of its own and one they all share,
        // both counting into the parent.
        ThreadCounter shared = new ThreadCounter(parent);
        for (int t = 0; t < threads; t++) {
            int id = t;
            Thread th = new Thread(() -> {
                try {
                    start.await();
                } catch (Exception e) {
                    throw new IllegalStateException(e);
                }
                ThreadCounter own = new ThreadCounter(parent);
                for (int i = 0; i < each; i++) {
                    ThreadCounters.Row r = counts.row();
                    r.add(SUM, 2);
                    r.add(SUM, -1); // taken back, as the actor takes back posted operations
                    r.max(MAX, id * 1_000L + (i % 1_000));
                    own.increment();
                    shared.increment();
                }
            });
            all.add(th);
            th.start();
        }
        for (Thread th : all) {
            th.join();
        }
        assertEquals((long) threads * each, shared.sum(), "the shared counter's own count");
        assertEquals(2L * threads * each, parent.sum(), "both children's counts");
        // A new thread's first count through a new child folds the ended threads' cells of the parent.
        Thread late = new Thread(() -> new ThreadCounter(parent).increment());
        late.start();
        late.join();
        assertEquals(2L * threads * each + 1, parent.sum(), "the ended threads' cells folded, none lost or doubled");
        assertArrayEquals(new long[] {(long) threads * each, (threads - 1) * 1_000L + 999},
                counts.sum(), "every (now dead) thread's counts, the largest of the maxima");
        ThreadCounters.Row mine = counts.row();
        assertTrue(mine.mine());
        mine.add(SUM, 1);
        mine.max(MAX, 5); // below the largest: no change
        assertArrayEquals(new long[] {(long) threads * each + 1, (threads - 1) * 1_000L + 999}, counts.sum());
    }

    @Test
    void aRowIsItsOwnersOnly() throws Exception {
        ThreadCounters counts = new ThreadCounters(1);
        ThreadCounters.Row mine = counts.row();
        AtomicReference<ThreadCounters.Row> theirs = new AtomicReference<>();
        Thread t = new Thread(() -> theirs.set(counts.row()));
        t.start();
        t.join();
        assertTrue(mine.mine());
        assertFalse(theirs.get().mine(), "another thread's row");
        assertSame(mine, counts.row(), "the same row at every call");
    }

    @Test
    void aSumWhileEndedThreadsAreFoldedNeitherMissesNorDoubleCountsTheirRows() throws Exception {
        ThreadCounters counts = new ThreadCounters(2, 1);
        String wrong = EndingThreads.race(g -> () -> {
            ThreadCounters.Row r = counts.row();
            for (int i = 0; i < EndingThreads.EACH; i++) {
                r.add(0, 1);
            }
            r.max(1, g + 1);
        }, () -> counts.sum()[0], () -> {
            long max = counts.sum()[1];
            return max > EndingThreads.GENERATIONS ? "maximum " + max + " above any value given" : null;
        });
        assertNull(wrong);
        assertArrayEquals(new long[] {(long) EndingThreads.GENERATIONS * EndingThreads.EACH, EndingThreads.GENERATIONS},
                counts.sum());
    }
}
