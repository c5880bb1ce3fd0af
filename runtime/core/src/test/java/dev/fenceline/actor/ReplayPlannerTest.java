package dev.fenceline.actor;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.fenceline.AtomicOp;
import dev.fenceline.EndpointFailedException;
import dev.fenceline.OutcomeUnknownException;
import dev.fenceline.spi.Revocation.Fate;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.agrona.collections.Long2ObjectHashMap;
import org.agrona.collections.LongHashSet;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * The replay planner as a pure function of the in-flight fragments, which connections remain, and
 * what the given-up ones said of their copies; and its verdicts, from the copies' fates and the
 * exactly-once scopes of the old and the new lane.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class ReplayPlannerTest {
    private final ComponentFixture f = new ComponentFixture();
    private final Long2ObjectHashMap<InflightTable.Fragment> fragments = new Long2ObjectHashMap<>();
    /** Connection 1 left slot 0; connection 2 is still in slot 1. */
    private final ReplayPlanner.Current current = (lane, connection) -> lane == 1 && connection == 2;
    private final Map<Long, Fate> fates = new HashMap<>();
    private final ReplayPlanner.Fates byToken = (connection, token) -> fates.getOrDefault(token, Fate.STOPPED);

    private Request ordered(Request r, long seq) {
        r.seq = seq;
        return r;
    }

    private Request add(long seq) {
        return ordered(Request.atomic(Request.Kind.ATOMIC_POST, 0, f.key.baseAddress(), f.key, AtomicOp.ADD, 8, 1, 0),
                seq);
    }

    private ReplayPlanner.Plan plan(LongHashSet neverSent) {
        return ReplayPlanner.plan(fragments, neverSent, token -> false, current, byToken);
    }

    @Test
    void fragmentsOfAConnectionThatLeftAreDroppedAndTheirRequestsRestartInIssueOrder() {
        Request late = ordered(f.put(8, 0), 7);
        Request early = ordered(f.put(8, 0), 3);
        Request done = ordered(f.put(8, 0), 5);
        done.succeed(0);
        fragments.put(20, new InflightTable.Fragment(late, 2, 0, 1, "s"));
        fragments.put(21, new InflightTable.Fragment(late, 0, 0, 1, "s"));
        fragments.put(22, new InflightTable.Fragment(late, 1, 1, 2, "s")); // still on its connection
        fragments.put(23, new InflightTable.Fragment(early, 0, 0, 1, "s"));
        fragments.put(24, new InflightTable.Fragment(done, 0, 0, 1, "s"));
        ReplayPlanner.Plan plan = plan(new LongHashSet());
        long[] dropped = plan.dropped();
        Arrays.sort(dropped);
        assertArrayEquals(new long[] {20, 21, 23, 24}, dropped);
        assertEquals(2, plan.restarts().size(), "the completed request is dropped, not restarted");
        assertSame(early, plan.restarts().get(0).request());
        assertSame(late, plan.restarts().get(1).request());
        assertArrayEquals(new int[] {0, 2}, plan.restarts().get(1).fragments(), "ascending, only the dropped ones");
        assertEquals(5, fragments.size(), "the plan changes nothing");
    }

    @Test
    void aCopyThatMayHaveAppliedIsSentAgainOnlyWhereItIsRecognizedUnlessIdempotent() {
        Request atomic = add(1);
        Request parked = add(2);
        Request put = ordered(f.put(8, 0), 3);
        fragments.put(30, new InflightTable.Fragment(atomic, 0, 0, 1, "s"));
        fragments.put(31, new InflightTable.Fragment(parked, 0, 0, 1, "s"));
        fragments.put(32, new InflightTable.Fragment(put, 0, 0, 1, null));
        LongHashSet neverSent = new LongHashSet();
        neverSent.add(31);
        ReplayPlanner.Plan plan = plan(neverSent);
        ReplayPlanner.Restart a = plan.restarts().get(0);
        assertTrue(a.mayHaveApplied() && !a.mayStillApply());
        assertFalse(plan.restarts().get(1).mayHaveApplied(), "it was parked: no transport ever had it");
        assertEquals(ReplayPlanner.Verdict.RESTART, ReplayPlanner.verdict(a, 0, "s"), "the target will recognize it");
        assertEquals(ReplayPlanner.Verdict.OUTCOME_UNKNOWN, ReplayPlanner.verdict(a, 0, "other"));
        assertEquals(ReplayPlanner.Verdict.OUTCOME_UNKNOWN, ReplayPlanner.verdict(a, 0, null));
        assertEquals(ReplayPlanner.Verdict.OUTCOME_UNKNOWN, ReplayPlanner.verdict(a, -1, null),
                "no lane, but it may have been applied: not 'not applied'");
        assertEquals(ReplayPlanner.Verdict.RESTART, ReplayPlanner.verdict(plan.restarts().get(1), 0, null));
        assertEquals(ReplayPlanner.Verdict.NO_LANE, ReplayPlanner.verdict(plan.restarts().get(1), -1, null));
        assertEquals(ReplayPlanner.Verdict.RESTART, ReplayPlanner.verdict(plan.restarts().get(2), 0, null),
                "a put that can no longer land is idempotent: sent again anywhere");
    }

    @Test
    void aCopyThatMayStillApplyIsSentAgainOnlyWhereTheTargetRecognizesIt() {
        Request put = ordered(f.put(8, 0), 1);
        fragments.put(40, new InflightTable.Fragment(put, 0, 0, 1, "tcp:b"));
        fates.put(40L, Fate.MAY_STILL_APPLY);
        ReplayPlanner.Restart r = plan(new LongHashSet()).restarts().get(0);
        assertTrue(r.mayStillApply() && r.mayHaveApplied());
        assertEquals(ReplayPlanner.Verdict.RESTART, ReplayPlanner.verdict(r, 0, "tcp:b"),
                "the late copy and the new one meet in one window: at most one applies, never after the answer");
        assertEquals(ReplayPlanner.Verdict.UNORDERED, ReplayPlanner.verdict(r, 0, null),
                "even a put: the late copy could land after work fenced behind it");
        assertEquals(ReplayPlanner.Verdict.UNORDERED, ReplayPlanner.verdict(r, -1, null));
    }

    @Test
    void aRevokedCopyIsSentAgainAnywhereAndAnAnsweringOneIsHeld() {
        Request atomic = add(1);
        Request split = ordered(f.put(600, 0), 2);
        fragments.put(50, new InflightTable.Fragment(atomic, 0, 0, 1, null));
        fragments.put(51, new InflightTable.Fragment(split, 0, 0, 1, null));
        fragments.put(52, new InflightTable.Fragment(split, 1, 0, 1, null));
        fates.put(50L, Fate.REVOKED);
        fates.put(51L, Fate.ANSWER_FOLLOWS);
        fates.put(52L, Fate.REVOKED);
        ReplayPlanner.Plan plan = plan(new LongHashSet());
        assertArrayEquals(new long[] {51}, plan.held(), "its old connection will answer it: it stays");
        long[] dropped = plan.dropped();
        Arrays.sort(dropped);
        assertArrayEquals(new long[] {50, 52}, dropped);
        assertEquals(ReplayPlanner.Verdict.RESTART, ReplayPlanner.verdict(plan.restarts().get(0), 0, null),
                "revoked: it never applied and never will, so even an atomic goes again anywhere");
        assertArrayEquals(new int[] {1}, plan.restarts().get(1).fragments(), "only the revoked fragment");
        LongHashSet already = new LongHashSet();
        already.add(51);
        ReplayPlanner.Plan again = ReplayPlanner.plan(fragments, new LongHashSet(), already::contains, current, byToken);
        assertEquals(0, again.held().length, "held since an earlier change: left as it is");
    }

    /**
     * A put whose other fragments completed (they were applied) is partly written: if no lane can
     * carry its dropped ones, it fails as unknown, not as never applied; a put whose every fragment
     * was revoked still fails as not applied.
     */
    @Test
    void aPutWithFragmentsAppliedIsNeverReportedUnapplied() {
        Request partly = ordered(f.put(4 * 256, 0), 1);
        partly.fragmentCount = 4; // fragments 0 and 1 answered: no longer in the table
        Request whole = ordered(f.put(2 * 256, 0), 2);
        whole.fragmentCount = 2;
        fragments.put(60, new InflightTable.Fragment(partly, 2, 0, 1, null));
        fragments.put(61, new InflightTable.Fragment(partly, 3, 0, 1, null));
        fragments.put(62, new InflightTable.Fragment(whole, 0, 0, 1, null));
        fragments.put(63, new InflightTable.Fragment(whole, 1, 0, 1, null));
        for (long t = 60; t <= 63; t++) {
            fates.put(t, Fate.REVOKED);
        }
        List<ReplayPlanner.Restart> restarts = plan(new LongHashSet()).restarts();
        ReplayPlanner.Restart p = restarts.get(0);
        assertArrayEquals(new int[] {2, 3}, p.fragments());
        assertTrue(p.mayHaveApplied(), "two of its fragments were applied");
        assertEquals(ReplayPlanner.Verdict.OUTCOME_UNKNOWN, ReplayPlanner.verdict(p, -1, null));
        assertEquals(ReplayPlanner.Verdict.RESTART, ReplayPlanner.verdict(p, 0, null), "a put may go again");
        ReplayPlanner.Restart w = restarts.get(1);
        assertFalse(w.mayHaveApplied(), "every fragment revoked: nothing applied");
        assertEquals(ReplayPlanner.Verdict.NO_LANE, ReplayPlanner.verdict(w, -1, null));

        partly.mayHaveApplied |= p.mayHaveApplied();
        EndpointFailedException noRoom = new EndpointFailedException("lane 0 takes at most 128 bytes");
        assertInstanceOf(OutcomeUnknownException.class, partly.truthful(noRoom),
                "refused after its restart: its applied fragments make the outcome unknown");
        assertSame(noRoom, whole.truthful(noRoom));
    }

    private Request get(long epoch, long seq) {
        return ordered(Request.rma(Request.Kind.GET, epoch, java.nio.ByteBuffer.allocate(8), f.key.baseAddress(),
                f.key), seq);
    }

    /**
     * A get that may have read, and a put of a later epoch behind it on the same lane (a weak fence
     * let it follow) that may have been applied: reading again would return the put's data, newer
     * than the get's fence allows. Found by SimAndTcpTest (a get read what a later fenced put wrote).
     */
    @Test
    void aGetThatMayHaveReadIsNotReadAgainOnceALaterWriteOnItsLaneMayHaveApplied() {
        Request read = get(4, 1);
        Request write = ordered(f.put(8, 5), 2);
        fragments.put(40, new InflightTable.Fragment(read, 0, 0, 1, "s"));
        fragments.put(41, new InflightTable.Fragment(write, 0, 0, 1, "s"));
        ReplayPlanner.Restart g = plan(new LongHashSet()).restarts().get(0);
        assertSame(read, g.request());
        assertTrue(g.overtaken());
        assertEquals(ReplayPlanner.Verdict.OUTCOME_UNKNOWN, ReplayPlanner.verdict(g, 1, "s"),
                "not even where the window would recognize it: a get's first read is not remembered");
        ReplayPlanner.Restart w = plan(new LongHashSet()).restarts().get(1);
        assertEquals(ReplayPlanner.Verdict.RESTART, ReplayPlanner.verdict(w, 1, "s"), "the put itself goes again");

        // The later write never reached the target: reading again is safe.
        fates.put(41L, Fate.REVOKED);
        assertFalse(plan(new LongHashSet()).restarts().get(0).overtaken());
        // The get never read: safe too, whatever the write did.
        fates.remove(41L);
        fates.put(40L, Fate.REVOKED);
        assertFalse(plan(new LongHashSet()).restarts().get(0).overtaken());
        // A write of the same epoch is not ordered after the get: no overtaking.
        fates.remove(40L);
        fragments.put(41, new InflightTable.Fragment(ordered(f.put(8, 4), 2), 0, 0, 1, "s"));
        assertFalse(plan(new LongHashSet()).restarts().get(0).overtaken());
        // A later write on another connection is ordered by a strong fence, which waited for the get.
        fragments.put(41, new InflightTable.Fragment(ordered(f.put(8, 5), 2), 0, 2, 3, "s"));
        assertFalse(plan(new LongHashSet()).restarts().get(0).overtaken());
    }

    /**
     * The restart's judgement weighs every copy given up so far: a copy that may still apply in one
     * scope and was then sent again and withdrawn in another still needs a lane of the first.
     */
    @Test
    void aRestartIsJudgedOnEveryCopySoFarNotTheLastOneAlone() {
        Request atomic = add(1);
        atomic.copyGivenUp(true, true, "tcp:b"); // the first copy may still apply at b's window
        atomic.copyGivenUp(false, false, "shm:c"); // the second was withdrawn unsent
        int[] all = {0};
        assertEquals(ReplayPlanner.Verdict.UNORDERED, ReplayPlanner.judge(atomic, 0, "shm:c", all, false),
                "a lane of another scope would apply the atomic a second time");
        assertEquals(ReplayPlanner.Verdict.UNORDERED, ReplayPlanner.judge(atomic, -1, null, all, false));
        assertEquals(ReplayPlanner.Verdict.RESTART, ReplayPlanner.judge(atomic, 0, "tcp:b", all, false),
                "where the late copy's window is, the two meet and one applies");

        Request applied = add(2);
        applied.copyGivenUp(true, false, "tcp:b");
        assertEquals(ReplayPlanner.Verdict.OUTCOME_UNKNOWN, ReplayPlanner.judge(applied, 0, "shm:c", all, false));
        assertEquals(ReplayPlanner.Verdict.OUTCOME_UNKNOWN, ReplayPlanner.judge(applied, -1, null, all, false));
        assertEquals(ReplayPlanner.Verdict.RESTART, ReplayPlanner.judge(applied, 0, "tcp:b", all, false),
                "the window that may have applied it recognizes it again");
        assertEquals(ReplayPlanner.Verdict.NO_LANE, ReplayPlanner.judge(add(3), -1, null, all, false),
                "never applied, and no lane: it fails unapplied");
    }

    @Test
    void eachRefusalSaysWhyTheOutcomeIsUnknown() {
        Request atomic = add(1);
        OutcomeUnknownException notResent = ReplayPlanner.refusal(ReplayPlanner.Verdict.OUTCOME_UNKNOWN, atomic,
                false);
        assertTrue(notResent.getMessage().startsWith("ATOMIC_POST at 0x" + Long.toHexString(f.key.baseAddress()))
                && notResent.getMessage().endsWith("if it were sent again, so it is not"), notResent.getMessage());
        assertTrue(ReplayPlanner.refusal(ReplayPlanner.Verdict.OUTCOME_UNKNOWN, atomic, true).getMessage()
                .contains("so it is not read again"));
        assertTrue(ReplayPlanner.refusal(ReplayPlanner.Verdict.UNORDERED, atomic, false).getMessage()
                .contains("may still be applied later"));
        for (ReplayPlanner.Verdict notARefusal : List.of(ReplayPlanner.Verdict.RESTART, ReplayPlanner.Verdict.NO_LANE)) {
            assertThrows(IllegalArgumentException.class, () -> ReplayPlanner.refusal(notARefusal, atomic, false));
        }
    }
}
