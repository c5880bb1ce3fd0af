package dev.fenceline.testkit.world;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** The world's scheduling rules, without a runtime on it. */
@Timeout(value = 30, unit = TimeUnit.SECONDS)
class WorldTest {
    @Test
    void advancingStopsAtItsTimeEvenBehindACancelledTimer() {
        try (World w = World.open(1)) {
            long t0 = w.nanoTime();
            w.at(t0 + 50_000_000L, () -> { }).cancelled = true; // as every answered ask leaves one
            AtomicBoolean late = new AtomicBoolean();
            w.at(t0 + 10_000_000_000L, () -> late.set(true));
            w.runUntilVirtual(t0 + 100_000_000L);
            assertFalse(late.get(), "a timer ten virtual seconds away ran during a 100 ms advance");
            assertEquals(t0 + 100_000_000L, w.nanoTime());
        }
    }

    @Test
    void readyTasksRunInASeededOrderAndTimersInTimeOrder() {
        List<String> first = order(5);
        assertEquals(first, order(5), "one seed, one order");
        assertTrue(first.indexOf("t1") < first.indexOf("t2"), "timers run by due time: " + first);
        boolean differs = false;
        for (long seed = 6; seed < 20 && !differs; seed++) {
            differs = !order(seed).equals(first);
        }
        assertTrue(differs, "other seeds choose other orders among ready tasks");
    }

    private static List<String> order(long seed) {
        List<String> ran = new ArrayList<>();
        try (World w = World.open(seed)) {
            for (int i = 0; i < 8; i++) {
                String name = "r" + i;
                w.execute(() -> ran.add(name));
            }
            w.at(w.nanoTime() + 2_000, () -> ran.add("t2"));
            w.at(w.nanoTime() + 1_000, () -> ran.add("t1"));
            w.pumpUntil(() -> ran.size() == 10, TimeUnit.SECONDS.toNanos(1), TimeUnit.SECONDS.toNanos(1), "tasks");
        }
        return ran;
    }

    @Test
    void waitingFromInsideATaskIsRefused() {
        try (World w = World.open(2)) {
            AtomicBoolean refused = new AtomicBoolean();
            w.execute(() -> {
                try {
                    w.pumpUntil(() -> true, 1, 1, "nested");
                } catch (IllegalStateException e) {
                    refused.set(true);
                }
            });
            w.pumpUntil(refused::get, TimeUnit.SECONDS.toNanos(1), TimeUnit.SECONDS.toNanos(1), "the task");
            assertTrue(refused.get());
        }
    }

    @Test
    void aStageThatNeverCompletesEndsAtTheVirtualLimitEvenWithATimerAlwaysArmed() {
        try (World w = World.open(3)) {
            Runnable[] tick = new Runnable[1];
            tick[0] = () -> w.at(w.nanoTime() + 1_000_000_000L, tick[0]); // a keepalive never lets it idle
            w.execute(tick[0]);
            IllegalStateException e = assertThrows(IllegalStateException.class, () -> w.pumpUntil(() -> false,
                    TimeUnit.SECONDS.toNanos(1), TimeUnit.MINUTES.toNanos(10), "a stage that never completes"));
            assertTrue(e.getMessage().contains("not done after 600000 ms of virtual time"), e.getMessage());
        }
    }

    @Test
    void aClosedWorldTakesNoMoreWork() {
        World w = World.open(4);
        w.close();
        AtomicBoolean ran = new AtomicBoolean();
        w.execute(() -> ran.set(true));
        assertFalse(w.step(), "nothing to run in a closed world");
        assertFalse(ran.get());
        try (World next = World.open(5)) {
            assertEquals(5, next.seed(), "a closed world lets the next one open");
        }
    }
}
