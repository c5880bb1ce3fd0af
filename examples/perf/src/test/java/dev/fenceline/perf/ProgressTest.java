package dev.fenceline.perf;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotSame;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;

class ProgressTest {

    @Test
    void aWarmUpIsTwoPassesOfItsCountInAll() throws Exception {
        List<Integer> passes = new ArrayList<>();
        List<Progress> counts = new ArrayList<>();
        Progress.warmUp(1_000_001, (n, p) -> {
            passes.add(n);
            counts.add(p);
        });
        assertEquals(List.of(500_001, 500_000), passes);
        assertNotSame(counts.get(0), counts.get(1));
    }

    @Test
    void aWarmUpOfOneIsOnePassAndOfNoneIsNone() throws Exception {
        List<Integer> passes = new ArrayList<>();
        Progress.warmUp(1, (n, p) -> passes.add(n));
        assertEquals(List.of(1), passes);
        passes.clear();
        Progress.warmUp(0, (n, p) -> passes.add(n));
        assertEquals(List.of(), passes);
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
