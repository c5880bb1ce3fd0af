package dev.fenceline.spi.support;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.fenceline.spi.ProgressAgent;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.agrona.concurrent.Agent;
import org.agrona.concurrent.SleepingIdleStrategy;
import org.agrona.concurrent.YieldingIdleStrategy;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** Progress agents on dedicated threads or one shared thread; closing stops them on their threads. */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class ProgressRunnersTest {
    /** Counts its turns and remembers the threads it ran on. */
    private static final class Counting implements Agent {
        final String role;
        final AtomicInteger turns = new AtomicInteger();
        final Set<String> threads = ConcurrentHashMap.newKeySet();
        volatile String closedOn;

        Counting(String role) {
            this.role = role;
        }

        @Override
        public int doWork() {
            turns.incrementAndGet();
            threads.add(Thread.currentThread().getName());
            return 0;
        }

        @Override
        public void onClose() {
            closedOn = Thread.currentThread().getName();
        }

        @Override
        public String roleName() {
            return role;
        }
    }

    private static void awaitTurns(Counting... agents) throws InterruptedException {
        long end = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        for (Counting a : agents) {
            while (a.turns.get() < 3) {
                assertTrue(System.nanoTime() < end, a.role + " never ran");
                Thread.sleep(1);
            }
        }
    }

    @Test
    void dedicatedGivesEachAgentAThreadOfItsOwn() throws Exception {
        Counting a = new Counting("inbox");
        Counting b = new Counting("uct");
        ProgressRunners r = ProgressRunners.start("w1", List.of(new ProgressAgent(a, new SleepingIdleStrategy(100_000)),
                new ProgressAgent(b, new YieldingIdleStrategy())), ProgressRunners.Threading.DEDICATED, null);
        awaitTurns(a, b);
        assertEquals(2, r.threads());
        assertEquals(Set.of("fenceline-progress-w1-inbox"), a.threads);
        assertEquals(Set.of("fenceline-progress-w1-uct"), b.threads);
        r.close();
        assertEquals("fenceline-progress-w1-inbox", a.closedOn, "closed on its own thread, before close returns");
        int after = a.turns.get();
        Thread.sleep(20);
        assertEquals(after, a.turns.get(), "no turn after close");
    }

    @Test
    void sharedRunsEveryAgentInTurnOnOneThread() throws Exception {
        Counting a = new Counting("inbox");
        Counting b = new Counting("uct");
        ProgressRunners r = ProgressRunners.start("w2", List.of(new ProgressAgent(a, null), new ProgressAgent(b, null)),
                ProgressRunners.Threading.SHARED, new SleepingIdleStrategy(100_000));
        awaitTurns(a, b);
        assertEquals(1, r.threads());
        assertEquals(Set.of("fenceline-progress-w2"), a.threads);
        assertEquals(a.threads, b.threads);
        r.close();
        assertEquals("fenceline-progress-w2", b.closedOn);
    }

    @Test
    void noAgentsNoThreads() {
        try (ProgressRunners r = ProgressRunners.start("w3", List.of(), ProgressRunners.Threading.SHARED, null)) {
            assertEquals(0, r.threads());
        }
    }
}
