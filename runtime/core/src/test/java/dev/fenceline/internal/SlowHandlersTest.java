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
        }, (h, id, took, resolution, over) -> reports.add(new Report(id, took, resolution)), false);
        s.bound(bound);
        return s;
    }

    @Test
    void aCallNoLookFoundRunningReadsNoClockAndIsNotReported() {
        SlowHandlers s = handlers(BOUND);
        s.look(new ArrayList<>()); // the thread's slot is made on its first call; a look before that sees nothing
        long call = s.start(3);
        int reads = clockReads;
        now += 500 * MS; // long, but no look happened meanwhile
        s.finished(call);
        assertEquals(reads, clockReads, "the return read no clock");
        assertEquals(List.of(), reports);
    }

    @Test
    void aCallFoundRunningIsDatedBetweenTwoLooksAndReportedWhenItReturns() {
        SlowHandlers s = handlers(BOUND);
        s.finished(s.start(1)); // makes the slot at 0
        now = 20 * MS;
        s.look(new ArrayList<>()); // nothing running
        now = 30 * MS;
        long call = s.start(5);
        now = 45 * MS;
        s.look(new ArrayList<>()); // finds it: it started after 20 ms
        now = 180 * MS;
        s.finished(call);
        assertEquals(List.of(new Report(5, 160 * MS, 25 * MS)), reports,
                "took is from the look before the one that found it: at most the resolution over the 150 ms it ran");
    }

    @Test
    void aCallThatStartsWhileALookRunsIsDatedFromWhenTheLookFoundIt() {
        long[] call = new long[1];
        SlowHandlers[] s = new SlowHandlers[1];
        // The look begins at 20 ms; its thread is slow, and the call starts at 30 ms, before the
        // look reads its slot: it is found at 31 ms.
        s[0] = new SlowHandlers("w", () -> {
            clockReads++;
            if (now == 20 * MS) {
                now = 30 * MS;
                call[0] = s[0].start(2);
                now = 31 * MS;
                return 20 * MS;
            }
            return now;
        }, (h, id, took, resolution, over) -> reports.add(new Report(id, took, resolution)), false);
        clockReads = 0;
        s[0].bound(BOUND);
        s[0].finished(s[0].start(0)); // the slot, made at 0
        now = 20 * MS;
        s[0].look(new ArrayList<>());
        now = 125 * MS; // it ran 95 ms, under the bound
        int reads = clockReads;
        s[0].finished(call[0]);
        assertEquals(reads + 1, clockReads, "the look found it: its return read the clock");
        assertEquals(List.of(), reports, "dated from the clock read after the look found it, not from the look's start");
    }

    @Test
    void aShortCallFoundAfterALongGapIsNotBlamed() {
        SlowHandlers s = handlers(BOUND);
        s.finished(s.start(1));
        now = 299 * MS;
        long call = s.start(2);
        now = 300 * MS;
        List<SlowHandlers.Overdue> overdue = new ArrayList<>();
        s.look(overdue); // the watchdog ran late: 300 ms since its last look, the call 1 ms old
        now = 301 * MS;
        s.look(overdue);
        assertEquals(List.of(), overdue, "not logged as over its bound");
        now = 302 * MS;
        s.finished(call);
        assertEquals(List.of(), reports, "only the time since the look that found it counts against the bound");
    }

    @Test
    void aHandlerCalledFromAHandlerIsPartOfTheOuterCall() {
        SlowHandlers s = handlers(BOUND);
        long outer = s.start(1);
        assertEquals(0, s.start(2), "nested: not counted on its own");
        s.finished(0);
        now = 10 * MS;
        s.look(new ArrayList<>());
        now = 200 * MS;
        s.finished(outer);
        assertEquals(1, reports.size(), "the outer call, still running after the inner one returned: " + reports);
        assertEquals(1, reports.get(0).id());
    }

    @Test
    void noBoundCountsNothing() {
        SlowHandlers s = handlers(0);
        assertEquals(0, s.start(1));
        s.look(new ArrayList<>());
        now = 500 * MS;
        s.finished(0);
        assertEquals(List.of(), reports);
    }

    @Test
    void aCallFoundBeforeTheBoundWasLiftedIsNotReported() {
        SlowHandlers s = handlers(BOUND);
        long call = s.start(4);
        now = 10 * MS;
        s.look(new ArrayList<>());
        s.bound(0);
        now = 500 * MS;
        s.finished(call);
        assertEquals(List.of(), reports, "no bound, nothing over it");
    }

    @Test
    void theWatchdogThreadEndsWhenNothingIsWatchedAndStartsAgain() throws InterruptedException {
        org.junit.jupiter.api.Assumptions.assumeTrue(SlowHandlers.watched() == 0,
                "another test's worker is still watched in this JVM");
        SlowHandlers s = new SlowHandlers("w");
        s.bound(BOUND);
        assertTrue(SlowHandlers.watchdogRuns());
        s.close();
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(5);
        while (SlowHandlers.watchdogRuns() && deadline - System.nanoTime() > 0) {
            Thread.sleep(10); // the watchdog's own pace (50 ms at most), real time
        }
        assertTrue(!SlowHandlers.watchdogRuns(), "it ended once nothing was watched");
        s.bound(BOUND);
        assertTrue(!SlowHandlers.watchdogRuns(), "a closed worker is not watched again");
        SlowHandlers t = new SlowHandlers("v");
        try {
            t.bound(BOUND);
            assertTrue(SlowHandlers.watchdogRuns(), "a new one started for the next worker");
        } finally {
            t.close();
        }
    }

    @Test
    void theGapIsHalfTheBoundWithinOneTo50Ms() {
        assertEquals(50 * MS, SlowHandlers.gap(BOUND));
        assertEquals(10 * MS, SlowHandlers.gap(20 * MS));
        assertEquals(MS, SlowHandlers.gap(MS));
        assertEquals(50 * MS, SlowHandlers.gap(TimeUnit.HOURS.toNanos(1)));
    }

    @Test
    void aCallOverItsBoundIsLoggedWithItsIdWhileItRunsAndNotOnceItReturned() {
        ch.qos.logback.classic.Logger logger = (ch.qos.logback.classic.Logger) org.slf4j.LoggerFactory.getLogger(
                SlowHandlers.class);
        ch.qos.logback.core.read.ListAppender<ch.qos.logback.classic.spi.ILoggingEvent> logged =
                new ch.qos.logback.core.read.ListAppender<>();
        logged.start();
        logger.addAppender(logged);
        try {
            SlowHandlers s = handlers(BOUND);
            long call = s.start(40_000);
            now = 10 * MS;
            List<SlowHandlers.Overdue> overdue = new ArrayList<>();
            s.look(overdue);
            assertEquals(List.of(), overdue, "found, not over its bound yet");
            now = 120 * MS;
            s.look(overdue);
            assertEquals(1, overdue.size(), "over its bound since it was found");
            overdue.get(0).log();
            List<String> lines = logged.list.stream().map(e -> e.getFormattedMessage()).toList();
            assertEquals(1, lines.size(), lines.toString());
            assertTrue(lines.get(0).contains("handler 40000 ") && lines.get(0).contains("at least 110 ms"), lines.get(0));
            s.look(overdue);
            assertEquals(1, overdue.size(), "a call is logged once");
            s.finished(call);

            long other = s.start(40_001);
            now = 130 * MS;
            s.look(overdue);
            now = 240 * MS;
            s.look(overdue);
            assertEquals(2, overdue.size());
            s.finished(other); // returned before the watchdog logged it
            overdue.get(1).log();
            assertEquals(1, logged.list.size(), "no stack of a call that already returned: " + logged.list);
        } finally {
            logger.detachAppender(logged);
        }
    }

    /**
     * Random calls and looks, the watchdog now and then late: a call is reported exactly when it ran
     * past the bound after the first look that found it, with a took from the look before that one,
     * never less than it ran and at most its resolution more; and every call longer than the bound
     * plus the gap between looks is reported when no look during it came late.
     */
    @Test
    void randomSchedulesReportExactlyTheCallsFoundAndOverTheirBound() {
        long seed = Long.getLong("fenceline.test.seed", 20261205L);
        System.out.println("SlowHandlersTest seed " + seed);
        SplittableRandom random = new SplittableRandom(seed);
        long gap = BOUND / 2; // what the watchdog keeps to for this bound, when on time
        int reported = 0;
        int unseen = 0;
        int mustReport = 0;
        for (int round = 0; round < 200; round++) {
            reports.clear();
            now = 0;
            SlowHandlers s = handlers(BOUND);
            s.finished(s.start(0)); // the slot, made at 0
            long lastLook = 0;
            long nextLook = random.nextLong(gap);
            boolean lateBefore = false;
            for (int c = 0; c < 50; c++) {
                now += 1 + random.nextLong(20 * MS);
                long length = random.nextInt(3) == 0 ? random.nextLong(400 * MS) : random.nextLong(2 * MS);
                long begin = now;
                while (nextLook < begin) { // looks between calls find nothing running
                    now = nextLook;
                    s.look(new ArrayList<>());
                    lastLook = nextLook;
                    long late = random.nextInt(10) == 0 ? random.nextLong(200 * MS) : 0;
                    lateBefore = late > 0;
                    nextLook += gap + late;
                }
                now = begin;
                long call = s.start(1 + c % 7);
                boolean late = lateBefore; // the look after the call began came late
                long before = lastLook;
                long found = -1;
                while (nextLook < begin + length) {
                    now = nextLook;
                    s.look(new ArrayList<>());
                    if (found < 0) {
                        found = nextLook;
                        before = lastLook;
                    }
                    lastLook = nextLook;
                    long lateBy = random.nextInt(10) == 0 ? random.nextLong(200 * MS) : 0;
                    late |= lateBy > 0;
                    lateBefore = lateBy > 0;
                    nextLook += gap + lateBy;
                }
                now = begin + length;
                int had = reports.size();
                s.finished(call);
                String where = "seed " + seed + ", round " + round + ", call " + c + " of " + length / MS + " ms";
                if (!late && length > BOUND + gap) {
                    mustReport++;
                    assertEquals(had + 1, reports.size(), "a call longer than the bound and a gap: " + where);
                }
                if (found >= 0 && now - found > BOUND) {
                    assertEquals(had + 1, reports.size(), "reported: " + where);
                    Report r = reports.get(had);
                    assertEquals(new Report(1 + c % 7, now - before, found - before), r, where);

                    reported++;
                } else {
                    assertEquals(had, reports.size(), "not reported: " + where);
                    unseen += found < 0 ? 1 : 0;
                }
            }
        }
        assertTrue(reported > 100 && unseen > 100 && mustReport > 100, "the schedules had every kind: "
                + reported + " reported, " + unseen + " never found, " + mustReport + " long and watched on time");
    }
}
