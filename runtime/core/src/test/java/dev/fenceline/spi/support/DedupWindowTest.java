package dev.fenceline.spi.support;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.fenceline.spi.support.DedupWindow.Seen;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import java.util.concurrent.TimeUnit;

@Timeout(value = 60, unit = TimeUnit.SECONDS)
class DedupWindowTest {
    /** A clock that never moves: grown storage goes back only when lookups have paid for it. */
    private static final java.util.function.LongSupplier FROZEN = () -> 0L;
    @Test
    void duplicatesGetTheFirstOutcome() {
        DedupWindow w = new DedupWindow(16);
        assertEquals(Seen.NEW, w.lookup(0, 0));
        w.record(0, 41);
        assertEquals(Seen.DUPLICATE, w.lookup(0, 0));
        assertEquals(41, w.result(0));
        assertEquals(Seen.NEW, w.lookup(1, 0));
        dev.fenceline.FencelineException error = new dev.fenceline.FencelineException("refused");
        w.recordFailure(1, error);
        assertEquals(Seen.FAILED_BEFORE, w.lookup(1, 0), "a refused operation is refused again, never applied");
        assertSame(error, w.failure(1));
    }

    @Test
    void belowTheLowWaterMarkIsStaleAndForgotten() {
        DedupWindow w = new DedupWindow(16);
        for (long s = 0; s < 10; s++) {
            assertEquals(Seen.NEW, w.lookup(s, 0));
            w.record(s, s);
        }
        assertEquals(Seen.DUPLICATE, w.lookup(7, 5), "at and above the mark: remembered");
        assertEquals(Seen.STALE, w.lookup(4, 5), "below the mark: a stale copy, never applied");
        assertEquals(Seen.STALE, w.lookup(4, 3), "the mark never goes back");
        assertEquals(5, w.lowWater());
    }

    /**
     * The case a fixed ring got wrong: one old operation stays incomplete (a slow fragment) while
     * thousands of newer ones complete. With the old operation holding the mark, it is still NEW
     * when it finally arrives, and its re-sent copy is still a DUPLICATE.
     */
    @Test
    void aSlowOperationFarBehindTheNewestIsStillTracked() {
        DedupWindow w = new DedupWindow(1 << 20);
        long slow = 3;
        for (long s = 0; s < 100_000; s++) {
            if (s != slow) {
                assertEquals(Seen.NEW, w.lookup(s, Math.min(s, slow)));
                w.record(s, s * 2);
            }
        }
        assertEquals(Seen.NEW, w.lookup(slow, slow), "never applied, far behind the newest");
        w.record(slow, 6);
        assertEquals(Seen.DUPLICATE, w.lookup(slow, slow));
        assertEquals(6, w.result(slow));
        assertEquals(Seen.DUPLICATE, w.lookup(99_999, slow));
        assertEquals(199_998, w.result(99_999), "entries survive the storage growing");
        assertEquals(Seen.STALE, w.lookup(slow, slow + 1));
    }

    @Test
    void beyondTheSpreadIsFullNotApplied() {
        DedupWindow w = new DedupWindow(8);
        assertEquals(Seen.NEW, w.lookup(7, 0));
        assertEquals(Seen.FULL, w.lookup(8, 0));
        assertEquals(Seen.NEW, w.lookup(8, 1), "room again once the mark moves");
        assertThrows(IllegalArgumentException.class, () -> w.record(100, 0));
    }

    /** Random arrivals against a model: exact answers for everything at or above the mark. */
    @Test
    void agreesWithAModel() {
        long seed = Long.getLong("fenceline.test.seed", 77);
        SplittableRandom rnd = new SplittableRandom(seed);
        DedupWindow w = new DedupWindow(4096);
        java.util.Map<Long, Long> applied = new java.util.HashMap<>();
        long low = 0;
        for (int i = 0; i < 200_000; i++) {
            low += rnd.nextInt(100) == 0 ? rnd.nextInt(20) : 0;
            lookUpAndApply(w, applied, low + rnd.nextInt(2000), low, seed);
        }
    }

    /** Windows that share a budget hold no more together than it grants; a dropped one gives its storage back. */
    @Test
    void aSharedBudgetBoundsWhatItsWindowsHold() {
        DedupBudget total = new DedupBudget("total", 8192, null);
        DedupBudget peer = new DedupBudget("per peer", 4096, total);
        DedupWindow a = DedupWindow.within(1 << 20, peer);
        DedupWindow b = DedupWindow.within(1 << 20, peer);
        int initial = DedupWindow.INITIAL;
        assertEquals(initial, a.capacity(), "a window starts small");
        assertEquals(2 * initial, peer.used(), "each window starts with its initial entries");
        assertEquals(Seen.NEW, a.lookup(2047, 0), "grows a to 2048 entries: within the budget");
        assertEquals(Seen.OVER_BUDGET, b.lookup(4095, 0), "would grow b to 4096: over the peer's 4096");
        assertEquals(Seen.NEW, b.lookup(initial - 1, 0), "what b already holds still works");
        b.record(initial - 1, 7);
        assertEquals(Seen.DUPLICATE, b.lookup(initial - 1, 0));
        assertEquals(Seen.NEW, b.lookup(1023, 0), "grows b to 1024 entries: 3072 of the peer's 4096");
        assertEquals(Seen.DUPLICATE, b.lookup(initial - 1, 0), "what it held survives the growth");
        assertEquals(3072, peer.used());
        assertEquals(3072, total.used());
        for (int i = 0; i < 1024 / initial; i++) {
            assertNotNull(DedupWindow.within(1 << 20, peer), "up to 4096 in all: granted");
        }
        assertEquals(4096, peer.used());
        assertNull(DedupWindow.within(1 << 20, peer), "one more window: over the budget, none made");
        a.release();
        a.release();
        assertEquals(2048, peer.used(), "released once, whatever the calls");
        assertEquals(2048, total.used());
        DedupBudget other = new DedupBudget("other peer", 8192, total);
        DedupWindow c = DedupWindow.within(1 << 20, other);
        assertNotNull(c);
        assertEquals(Seen.NEW, c.lookup(4095, 0), "4096 for c: 6144 of the total");
        for (int i = 0; i < 2048 / initial; i++) {
            assertNotNull(DedupWindow.within(1 << 13, other), "up to the total's 8192: granted");
        }
        assertNull(DedupWindow.within(1 << 13, other), "the total's 8192 is reached: refused");
        assertEquals(8192, total.used());
    }

    /**
     * Storage grown for a spread that has closed goes back to the budget, once a quarter of it in
     * lookups has passed since it grew; what is still in use is kept.
     */
    @Test
    void storageGrownForASpreadThatClosedGoesBack() {
        DedupBudget peer = new DedupBudget("per peer", 1 << 16, null);
        DedupWindow w = DedupWindow.within(1 << 20, peer, FROZEN);
        assertEquals(Seen.NEW, w.lookup(1000, 0));
        w.record(1000, 10);
        assertEquals(Seen.NEW, w.lookup(900, 0));
        w.record(900, 9);
        assertEquals(1024, w.capacity());
        assertEquals(1024, peer.used());
        assertEquals(Seen.DUPLICATE, w.lookup(900, 899), "in use now: [899, 1001), under a quarter of 1024");
        assertEquals(1024, w.capacity(), "two lookups since it grew: not yet paid for");
        for (int i = 3; i < 256; i++) {
            assertEquals(Seen.DUPLICATE, w.lookup(1000, 899));
        }
        assertEquals(1024, w.capacity(), "255 lookups since it grew");
        assertEquals(Seen.DUPLICATE, w.lookup(900, 899), "the 256th, a quarter of 1024");
        assertEquals(256, w.capacity(), "twice the use, to a power of two");
        assertEquals(256, peer.used(), "the rest is back in the budget");
        assertEquals(9, w.result(900));
        assertEquals(Seen.DUPLICATE, w.lookup(1000, 899));
        assertEquals(10, w.result(1000));
        assertEquals(Seen.NEW, w.lookup(950, 899));
        assertEquals(Seen.STALE, w.lookup(898, 899));
    }

    /**
     * A mark that jumps past everything stored leaves nothing behind it (no pass over the storage:
     * every slot is tagged with its sequence number), and the grown storage goes back once a quarter
     * of it in lookups has passed.
     */
    @Test
    void aMarkJumpingPastAGrownWindowGivesItsStorageBack() {
        DedupBudget peer = new DedupBudget("per peer", 1 << 22, null);
        DedupWindow w = DedupWindow.within(1 << 20, peer, FROZEN);
        assertEquals(Seen.NEW, w.lookup((1 << 20) - 1, 0));
        w.record((1 << 20) - 1, 5);
        assertEquals(1 << 20, w.capacity());
        long jumped = 3L << 20;
        assertEquals(Seen.NEW, w.lookup(jumped + (1 << 20) - 1, jumped), "the slot of 2^20 - 1, tagged with it");
        assertEquals(Seen.STALE, w.lookup((1 << 20) - 1, jumped));
        w.record(jumped, 6);
        assertEquals(Seen.DUPLICATE, w.lookup(jumped, jumped));
        assertEquals(6, w.result(jumped));
        assertEquals(1 << 20, w.capacity(), "three lookups since it grew");
        for (int i = 3; i < (1 << 18) - 1; i++) {
            assertEquals(Seen.DUPLICATE, w.lookup(jumped, jumped));
        }
        assertEquals(1 << 20, w.capacity(), "a lookup short of a quarter of its storage");
        assertEquals(Seen.DUPLICATE, w.lookup(jumped, jumped), "the quarter's last: it gives the storage back");
        assertEquals(DedupWindow.INITIAL, w.capacity(), "back to its initial storage, holding [jumped, jumped + 1)");
        assertEquals(DedupWindow.INITIAL, peer.used());
        assertEquals(6, w.result(jumped), "kept");
    }

    /**
     * A peer alternating a sequence number at the edge of the spread with a mark past it: growing
     * to the spread costs work in proportion to it, so the storage the window takes from its budget
     * over the run grows with the frames, not with frames times the spread.
     */
    @Test
    void aPeerAlternatingFarSequencesAndFarMarksCostsLittlePerFrame() {
        int spread = 1 << 16;
        long[] reserved = new long[1];
        DedupBudget peer = new DedupBudget("per peer", 1 << 20, null);
        DedupWindow.Budget counting = new DedupWindow.Budget() {
            @Override
            public boolean reserve(int entries) {
                reserved[0] += entries;
                return peer.reserve(entries);
            }

            @Override
            public void release(int entries) {
                peer.release(entries);
            }

            @Override
            public String describe() {
                return peer.describe();
            }
        };
        DedupWindow w = DedupWindow.within(spread, counting, FROZEN);
        int frames = 20_000;
        long mark = 0;
        for (int i = 0; i < frames; i += 2) {
            long far = mark + spread - 1;
            assertEquals(Seen.NEW, w.lookup(far, mark), "frame " + i);
            w.record(far, i);
            mark = far + 1;
            assertEquals(Seen.NEW, w.lookup(mark, mark), "frame " + (i + 1));
            w.record(mark, i + 1);
        }
        assertTrue(reserved[0] <= 4L * frames + 2L * spread, reserved[0] + " entries reserved over " + frames
                + " frames of a spread of " + spread);
        assertEquals(w.capacity(), peer.used(), "the budget counts what the window holds");
    }

    /**
     * Random arrivals with a mark that sometimes jumps far, against a model: the window grows and
     * gives storage back, its answers stay exact, and the budget counts what it holds.
     */
    @Test
    void agreesWithAModelWhileItGrowsAndShrinks() {
        long seed = Long.getLong("fenceline.test.seed", 78);
        SplittableRandom rnd = new SplittableRandom(seed);
        DedupBudget budget = new DedupBudget("per peer", 1 << 20, null);
        DedupWindow w = DedupWindow.within(1 << 16, budget, FROZEN);
        java.util.Map<Long, Long> applied = new java.util.HashMap<>();
        long low = 0;
        for (int i = 0; i < 200_000; i++) {
            int r = rnd.nextInt(1000);
            low += r == 0 ? rnd.nextInt(70_000) : r < 20 ? rnd.nextInt(50) : 0;
            lookUpAndApply(w, applied, low + (rnd.nextInt(100) == 0 ? rnd.nextInt(1 << 16) : rnd.nextInt(64)), low, seed);
            assertEquals(w.capacity(), budget.used(), "seed " + seed + ": the budget counts what the window holds");
            if (i % 1000 == 0) {
                final long mark = low;
                applied.keySet().removeIf(q -> q < mark); // below the mark: stale, never asked again here
            }
        }
    }

    /**
     * Storage grown with few lookups (an origin whose other operations went over one-sided lanes)
     * goes back a second after it grew, once the spread closed: a quiet endpoint's window does not
     * keep it, nor its peer's budget.
     */
    @Test
    void storageGrownWithFewLookupsGoesBackAfterASecond() {
        long[] now = {0};
        DedupBudget peer = new DedupBudget("per peer", 4000, null);
        DedupWindow a = DedupWindow.within(1 << 20, peer, () -> now[0]);
        assertEquals(Seen.NEW, a.lookup(2047, 0));
        a.record(2047, 1);
        assertEquals(2048, a.capacity());
        now[0] += DedupWindow.KEEP_GROWN_NANOS - 1;
        assertEquals(Seen.NEW, a.lookup(2048, 2048), "the spread closed");
        assertEquals(2048, a.capacity(), "a nanosecond short of a second, three lookups: kept");
        DedupWindow b = DedupWindow.within(1 << 20, peer, () -> now[0]);
        assertEquals(Seen.OVER_BUDGET, b.lookup(2047, 0), "the peer's budget is held by a's storage");
        now[0] += 1;
        assertEquals(Seen.NEW, a.lookup(2048, 2048));
        assertEquals(DedupWindow.INITIAL, a.capacity(), "a second after it grew: given back");
        assertEquals(Seen.NEW, b.lookup(2047, 0), "and the peer's other window may grow");
    }

    /** What a slot holds (an error, a running operation, results 0 and not) survives growing and shrinking. */
    @Test
    void everyKindOfOutcomeSurvivesAResize() {
        DedupWindow w = DedupWindow.within(1 << 12, DedupWindow.Budget.UNBOUNDED, FROZEN);
        dev.fenceline.FencelineException refused = new dev.fenceline.FencelineException("refused");
        long[] at = {10, 995};
        for (long b : at) { // before the growth, then (after it) near where the mark will be
            assertEquals(Seen.NEW, w.lookup(b, 0));
            w.recordFailure(b, refused);
            assertEquals(Seen.NEW, w.lookup(b + 1, 0));
            w.markRunning(b + 1);
            assertEquals(Seen.NEW, w.lookup(b + 2, 0));
            w.record(b + 2, 0);
            assertEquals(Seen.NEW, w.lookup(b + 3, 0));
            w.record(b + 3, 44);
        }
        assertEquals(1024, w.capacity(), "grown for 998");
        for (long b : at) {
            check(w, b, refused, 0);
        }
        for (int i = 0; i < 256; i++) {
            assertEquals(Seen.DUPLICATE, w.lookup(998, 0));
        }
        assertEquals(1024, w.capacity(), "the spread [0, 999) is open: lookups alone do not shrink it");
        check(w, 995, refused, 990);
        assertEquals(32, w.capacity(), "[990, 999) in use, paid for: shrunk to twice the use");
        check(w, 995, refused, 990);
        assertEquals(Seen.STALE, w.lookup(13, 990));
    }

    private static void check(DedupWindow w, long b, dev.fenceline.FencelineException refused, long mark) {
        assertEquals(Seen.FAILED_BEFORE, w.lookup(b, mark), "at " + b);
        assertSame(refused, w.failure(b));
        assertEquals(Seen.RUNNING, w.lookup(b + 1, mark));
        assertEquals(Seen.DUPLICATE, w.lookup(b + 2, mark));
        assertEquals(0, w.result(b + 2));
        assertEquals(Seen.DUPLICATE, w.lookup(b + 3, mark));
        assertEquals(44, w.result(b + 3));
        assertEquals(Seen.NEW, w.lookup(b + 4, mark), "never recorded");
    }

    /** The largest sequence number cannot be tracked (nothing lies past it): refused, never applied twice. */
    @Test
    void theLargestSequenceNumberIsFull() {
        DedupWindow w = DedupWindow.within(64, DedupWindow.Budget.UNBOUNDED, FROZEN);
        assertEquals(Seen.FULL, w.lookup(Long.MAX_VALUE, Long.MAX_VALUE - 20));
        assertEquals(Seen.NEW, w.lookup(Long.MAX_VALUE - 1, -1));
        w.record(Long.MAX_VALUE - 1, 9);
        for (int i = 0; i < 16; i++) {
            assertEquals(Seen.DUPLICATE, w.lookup(Long.MAX_VALUE - 1, Long.MAX_VALUE - 2));
        }
        assertEquals(9, w.result(Long.MAX_VALUE - 1));
        assertThrows(IllegalArgumentException.class, () -> w.record(Long.MAX_VALUE, 1));
    }

    /** Looks {@code s} up, checks the answer against the model, and applies it (window and model) if new. */
    private static void lookUpAndApply(DedupWindow w, java.util.Map<Long, Long> applied, long s, long low, long seed) {
        Seen seen = w.lookup(s, low);
        if (applied.containsKey(s)) {
            assertEquals(Seen.DUPLICATE, seen, "seed " + seed + " seq " + s);
            assertEquals((long) applied.get(s), w.result(s), "seed " + seed);
        } else {
            assertEquals(Seen.NEW, seen, "seed " + seed + " seq " + s);
            w.record(s, s ^ 0x5A);
            applied.put(s, s ^ 0x5A);
        }
    }
}
