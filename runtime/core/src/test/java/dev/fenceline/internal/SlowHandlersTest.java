package dev.fenceline.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * The slow-handler watch on virtual time: this thread runs the handler calls and the watchdog's
 * looks, in the order a schedule gives, with the clock the test moves.
 */
class SlowHandlersTest {
    private static final long MS = TimeUnit.MILLISECONDS.toNanos(1);
    private static final long BOUND = 100 * MS;

    /** What the reporter heard. */
    private record Report(int id, long took, long resolution) {
    }

    private long now;
    private int clockReads;
    private final List<Report> reports = new ArrayList<>();

    private SlowHandlers handlers(long bound) {
        SlowHandlers s = new SlowHandlers("w", () -> {
            clockReads++;
            return now;
        }, (h, id, took, resolution) -> reports.add(new Report(id, took, resolution)), false);
        s.bound(bound);
        return s;
    }

    @Test
    void aCallNoLookFoundRunningReadsNoClockAndIsNotReported() {
        SlowHandlers s = handlers(BOUND);
        s.look(now); // the thread's slot is made on its first call; a look before that sees nothing
        long call = s.start(3);
        int reads = clockReads;
        now += 500 * MS; // long, but no look happened meanwhile
        s.finished(3, call);
        assertEquals(reads, clockReads, "the return read no clock");
        assertEquals(List.of(), reports);
    }

    @Test
    void aCallFoundRunningIsDatedBetweenTwoLooksAndReportedWhenItReturns() {
        SlowHandlers s = handlers(BOUND);
        s.finished(0, s.start(1)); // makes the slot at 0
        now = 20 * MS;
        s.look(now); // nothing running
        now = 30 * MS;
        long call = s.start(5);
        now = 45 * MS;
        s.look(now); // finds it: it started after 20 ms
        now = 180 * MS;
        s.finished(5, call);
        assertEquals(List.of(new Report(5, 160 * MS, 25 * MS)), reports,
                "took is from the look before the one that found it: at most the resolution over the 150 ms it ran");
    }

    @Test
    void aShortCallFoundAfterALongGapIsNotBlamed() {
        SlowHandlers s = handlers(BOUND);
        s.finished(0, s.start(1));
        now = 299 * MS;
        long call = s.start(2);
        now = 300 * MS;
        s.look(now); // the watchdog ran late: 300 ms since its last look, the call 1 ms old
        now = 302 * MS;
        s.finished(2, call);
        assertEquals(List.of(), reports, "only the time since the look that found it counts against the bound");
    }

    @Test
    void aHandlerCalledFromAHandlerIsPartOfTheOuterCall() {
        SlowHandlers s = handlers(BOUND);
        long outer = s.start(1);
        assertEquals(0, s.start(2), "nested: not counted on its own");
        s.finished(2, 0);
        now = 10 * MS;
        s.look(now);
        now = 200 * MS;
        s.finished(1, outer);
        assertEquals(1, reports.size(), "the outer call, still running after the inner one returned: " + reports);
        assertEquals(1, reports.get(0).id());
    }

    @Test
    void noBoundCountsNothing() {
        SlowHandlers s = handlers(0);
        assertEquals(0, s.start(1));
        s.look(now);
        now = 500 * MS;
        s.finished(1, 0);
        assertEquals(List.of(), reports);
    }

    /**
     * Random calls and looks: a report only for a call that ran over its bound, with a took that is
     * never less than the call ran and at most its resolution more; and every call that ran longer
     * than the bound and two look gaps is reported.
     */
    @Test
    void randomSchedulesReportExactlyTheSlowCalls() {
        long seed = Long.getLong("fenceline.test.seed", 20261205L);
        System.out.println("SlowHandlersTest seed " + seed);
        SplittableRandom random = new SplittableRandom(seed);
        for (int round = 0; round < 200; round++) {
            reports.clear();
            now = 0;
            SlowHandlers s = handlers(BOUND);
            long gap = SlowHandlers.gap(BOUND);
            long nextLook = random.nextLong(gap);
            for (int c = 0; c < 50; c++) {
                now += random.nextLong(20 * MS);
                long length = random.nextInt(4) == 0 ? random.nextLong(300 * MS) : random.nextLong(MS);
                long begin = now;
                long call = s.start(c % 7);
                while (nextLook <= begin + length) {
                    now = Math.max(now, nextLook);
                    s.look(now);
                    long late = random.nextInt(10) == 0 ? random.nextLong(200 * MS) : 0; // a late watchdog
                    nextLook += gap + late;
                }
                now = begin + length;
                int before = reports.size();
                s.finished(c % 7, call);
                String where = "seed " + seed + ", round " + round + ", call " + c + " of " + length / MS + " ms";
                if (reports.size() > before) {
                    Report r = reports.get(reports.size() - 1);
                    assertTrue(length > BOUND, "reported only over the bound: " + where);
                    assertTrue(r.took() >= length && r.took() - r.resolution() <= length, r + ": " + where);
                } else if (length > BOUND + 2 * gap + 200 * MS) {
                    throw new AssertionError("a call that ran far over its bound was not reported: " + where);
                }
            }
        }
    }
}
