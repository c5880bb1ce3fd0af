package dev.fenceline.actor;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.fenceline.AtomicOp;
import java.util.Arrays;
import org.agrona.collections.Long2ObjectHashMap;
import org.agrona.collections.LongHashSet;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import java.util.concurrent.TimeUnit;

/** The replay planner as a pure function of the in-flight fragments and which connections remain. */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class ReplayPlannerTest {
    private final ComponentFixture f = new ComponentFixture();
    private final Long2ObjectHashMap<InflightTable.Fragment> fragments = new Long2ObjectHashMap<>();
    /** Connection 1 left slot 0; connection 2 is still in slot 1. */
    private final ReplayPlanner.Current current = (lane, connection) -> lane == 1 && connection == 2;

    private Request ordered(Request r, long seq) {
        r.seq = seq;
        return r;
    }

    @Test
    void fragmentsOfAConnectionThatLeftAreDroppedAndTheirRequestsRestartInIssueOrder() {
        Request late = ordered(f.put(8, 0), 7);
        Request early = ordered(f.put(8, 0), 3);
        Request done = ordered(f.put(8, 0), 5);
        done.succeed(0);
        fragments.put(20, new InflightTable.Fragment(late, 2, 0, 1, true));
        fragments.put(21, new InflightTable.Fragment(late, 0, 0, 1, true));
        fragments.put(22, new InflightTable.Fragment(late, 1, 1, 2, true)); // still on its connection
        fragments.put(23, new InflightTable.Fragment(early, 0, 0, 1, true));
        fragments.put(24, new InflightTable.Fragment(done, 0, 0, 1, true));
        ReplayPlanner.Plan plan = ReplayPlanner.plan(fragments, new LongHashSet(), current);
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
    void anAtomicThatMayHaveArrivedWithoutDeduplicationIsAnUnknownOutcome() {
        Request add = ordered(Request.atomic(Request.Kind.ATOMIC_POST, 0, f.key.baseAddress(), f.key, AtomicOp.ADD, 8,
                1, 0), 1);
        Request parkedAdd = ordered(Request.atomic(Request.Kind.ATOMIC_POST, 0, f.key.baseAddress(), f.key,
                AtomicOp.ADD, 8, 1, 0), 2);
        Request put = ordered(f.put(8, 0), 3);
        fragments.put(30, new InflightTable.Fragment(add, 0, 0, 1, false));
        fragments.put(31, new InflightTable.Fragment(parkedAdd, 0, 0, 1, false));
        fragments.put(32, new InflightTable.Fragment(put, 0, 0, 1, false));
        LongHashSet neverSent = new LongHashSet();
        neverSent.add(31);
        ReplayPlanner.Plan plan = ReplayPlanner.plan(fragments, neverSent, current);
        assertTrue(plan.restarts().get(0).sentWithoutDedup());
        assertFalse(plan.restarts().get(1).sentWithoutDedup(), "it was parked: no transport ever had it");
        assertEquals(ReplayPlanner.Verdict.OUTCOME_UNKNOWN, ReplayPlanner.verdict(plan.restarts().get(0), 0));
        assertEquals(ReplayPlanner.Verdict.RESTART, ReplayPlanner.verdict(plan.restarts().get(1), 0));
        assertEquals(ReplayPlanner.Verdict.RESTART, ReplayPlanner.verdict(plan.restarts().get(2), 0),
                "a put is idempotent: sent again");
        assertEquals(ReplayPlanner.Verdict.NO_LANE, ReplayPlanner.verdict(plan.restarts().get(2), -1));
    }
}
