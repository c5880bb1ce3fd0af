package dev.fenceline.perf;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;

class ProgressTest {

    @Test
    void aWarmUpIsFourPassesOfItsCountInAllTheCompilersAwaitedAfterTheSecondAndTheLast() throws Exception {
        List<String> steps = new ArrayList<>();
        List<Progress> counts = new ArrayList<>();
        Progress.warmUp(1_000_001, (n, p) -> {
            steps.add(String.valueOf(n));
            return counts.add(p);
        }, () -> steps.add("settle"));
        assertEquals(List.of("375001", "375000", "settle", "125000", "125000", "settle"), steps);
        assertEquals(4, counts.stream().distinct().count(), "each pass counts apart, unseen");
    }

    @Test
    void aShortWarmUpSkipsEmptyPassesAndNoneIsNone() throws Exception {
        List<String> steps = new ArrayList<>();
        Progress.warmUp(1, (n, p) -> steps.add(String.valueOf(n)), () -> steps.add("settle"));
        assertEquals(List.of("1", "settle"), steps);
        steps.clear();
        Progress.warmUp(7, (n, p) -> steps.add(String.valueOf(n)), () -> steps.add("settle"));
        assertEquals(List.of("4", "3", "settle"), steps);
        steps.clear();
        Progress.warmUp(9, (n, p) -> steps.add(String.valueOf(n)), () -> steps.add("settle"));
        assertEquals(List.of("4", "3", "settle", "1", "1", "settle"), steps);
        steps.clear();
        Progress.warmUp(0, (n, p) -> steps.add(String.valueOf(n)), () -> steps.add("settle"));
        assertEquals(List.of(), steps);
    }

    @Test
    void aMeasuredRunIsWarmedUpWithItsOwnCodeThenShown() throws Exception {
        List<String> steps = new ArrayList<>();
        AtomicLong shown = new AtomicLong(-1);
        String r = Progress.measured(16, 100, (n, p) -> {
            p.set(n);
            steps.add(String.valueOf(n));
            return "pass of " + n;
        }, () -> steps.add("settle"), shown::set);
        assertEquals("pass of 100", r);
        assertEquals(List.of("6", "6", "settle", "2", "2", "settle", "100"), steps);
        assertEquals(100, shown.get(), "only the measured pass's count is shown");
    }

    @Test
    void aCountSetDuringTheRunIsShownWhileItRuns() throws Exception {
        Progress p = new Progress();
        CountDownLatch seen = new CountDownLatch(1);
        boolean shownInTime = p.shown(n -> {
            if (n == 5) {
                seen.countDown();
            }
        }, () -> {
            p.set(5);
            return seen.await(10, TimeUnit.SECONDS); // the shower reads the count every PERIOD_MS
        });
        assertTrue(shownInTime, "the shower never showed a count set mid-run");
    }

    @Test
    void theMeasuredRunsLastCountIsShownWhenItEnds() throws Exception {
        Progress p = new Progress();
        AtomicLong shown = new AtomicLong(-1);
        String r = p.shown(shown::set, () -> {
            p.set(41);
            p.set(42);
            return "done";
        });
        assertEquals("done", r);
        assertEquals(42, shown.get());
        assertFalse(showerAlive(), "the thread that shows the count ends with the run");
    }

    @Test
    void aRunThatFailsStillEndsItsShowerAndShowsHowFarItCame() {
        Progress p = new Progress();
        AtomicLong shown = new AtomicLong(-1);
        IllegalStateException thrown = new IllegalStateException("stalled");
        IllegalStateException e = assertThrows(IllegalStateException.class, () -> p.shown(shown::set, () -> {
            p.set(7);
            throw thrown;
        }));
        assertSame(thrown, e);
        assertEquals(7, shown.get());
        assertFalse(showerAlive());
    }

    @Test
    void aCallerInterruptedDuringTheRunKeepsItsResultAndItsInterrupt() throws Exception {
        Progress p = new Progress();
        AtomicLong shown = new AtomicLong(-1);
        try {
            String r = p.shown(shown::set, () -> {
                p.set(9);
                Thread.currentThread().interrupt();
                return "done";
            });
            assertEquals("done", r);
            assertTrue(Thread.currentThread().isInterrupted());
            assertEquals(9, shown.get());
        } finally {
            Thread.interrupted(); // clear it for the next test
        }
    }

    @Test
    void nowhereToShowRunsTheBodyAlone() throws Exception {
        Progress p = new Progress();
        assertEquals(3, (int) p.shown(null, () -> {
            p.set(3);
            assertFalse(showerAlive(), "no thread when nothing shows the count");
            return 3;
        }));
        assertEquals(3, p.get());
    }

    private static boolean showerAlive() {
        return Thread.getAllStackTraces().keySet().stream()
                .anyMatch(t -> t.getName().equals("perf-progress") && t.isAlive());
    }
}
