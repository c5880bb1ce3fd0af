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
        String wrong = EndingThreads.race(g -> () -> {
            for (int i = 0; i < EndingThreads.EACH; i++) {
                counter.increment();
            }
        }, counter::sum, null);
        assertEquals(null, wrong);
        assertEquals((long) EndingThreads.GENERATIONS * EndingThreads.EACH, counter.sum());
    }
}
