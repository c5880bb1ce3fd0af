package dev.fenceline.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** Exact under concurrent threads, including threads that take turns and threads that end. */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class ThreadCounterTest {
    @Test
    void countsEveryIncrementOfEveryThread() throws Exception {
        ThreadCounter counter = new ThreadCounter();
        int threads = 4;
        int each = 500_000;
        CyclicBarrier start = new CyclicBarrier(threads);
        List<Thread> all = new ArrayList<>();
        long[] seen = new long[1];
        for (int t = 0; t < threads; t++) {
            Thread th = new Thread(() -> {
                try {
                    start.await();
                } catch (Exception e) {
                    throw new IllegalStateException(e);
                }
                for (int i = 0; i < each; i++) {
                    counter.increment(); // threads interleave, so the last-used cell keeps changing hands
                    if ((i & 0xffff) == 0) {
                        seen[0] = Math.max(seen[0], counter.sum());
                    }
                }
            });
            all.add(th);
            th.start();
        }
        for (Thread th : all) {
            th.join();
        }
        assertEquals((long) threads * each, counter.sum(), "every increment of every (now dead) thread");
        assertTrue(seen[0] <= (long) threads * each);
        counter.increment();
        assertEquals((long) threads * each + 1, counter.sum());
    }

    @Test
    void aSumWhileEndedThreadsAreFoldedNeitherMissesNorDoubleCountsTheirCells() throws Exception {
        ThreadCounter counter = new ThreadCounter();
        int generations = 200;
        int each = 1_000;
        java.util.concurrent.atomic.AtomicBoolean done = new java.util.concurrent.atomic.AtomicBoolean();
        java.util.concurrent.atomic.AtomicReference<String> wrong = new java.util.concurrent.atomic.AtomicReference<>();
        java.util.concurrent.atomic.AtomicInteger finished = new java.util.concurrent.atomic.AtomicInteger();
        Thread reader = new Thread(() -> {
            long last = 0;
            while (!done.get()) {
                long atLeast = (long) finished.get() * each; // threads that ended before this sum began
                long s = counter.sum();
                if (s < atLeast) { // an ended thread's cell missed: neither in its place nor retired
                    wrong.compareAndSet(null, "sum " + s + " below the " + atLeast + " counted by ended threads");
                }
                if (s < last || s > (long) generations * each) { // a cell counted twice, then once: a drop
                    wrong.compareAndSet(null, "sum went from " + last + " to " + s);
                }
                last = Math.max(last, s);
            }
        });
        reader.start();
        try {
            for (int g = 0; g < generations; g++) { // each new thread folds the ended ones' cells
                Thread t = new Thread(() -> {
                    for (int i = 0; i < each; i++) {
                        counter.increment();
                    }
                });
                t.start();
                t.join();
                finished.incrementAndGet();
            }
        } finally {
            done.set(true);
            reader.join();
        }
        assertEquals(null, wrong.get());
        assertEquals((long) generations * each, counter.sum());
    }
}
