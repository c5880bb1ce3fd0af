package dev.fenceline.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.fenceline.internal.FenceDecision.Admit;
import dev.fenceline.internal.FenceDecision.Defer;
import dev.fenceline.internal.FenceDecision.StartStrongFence;
import dev.fenceline.internal.FenceDecision.WeakFence;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import java.util.concurrent.TimeUnit;

/** Tier 1: every branch of the admission decision and the lane arithmetic (docs/fences.md). */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class FenceStateTest {
    private static final long L0 = 1;
    private static final long L1 = 2;
    private static final long L2 = 4;

    private static long lanes(int... idx) {
        long m = 0;
        for (int i : idx) {
            m |= 1L << i;
        }
        return m;
    }

    @Test
    void updateAndNormalizeVectors() {
        assertEquals(lanes(0, 2), FenceState.update(lanes(0, 1), lanes(0, 2)));
        assertEquals(lanes(1), FenceState.update(lanes(1), lanes(0, 1, 2)));
        assertEquals(lanes(0, 1), FenceState.normalize(lanes(0), lanes(0, 1), true));
        assertEquals(lanes(0), FenceState.normalize(lanes(0), lanes(0, 1), false));
        assertEquals(0, FenceState.normalize(0, lanes(0, 1), true), "nothing recorded: nothing to widen");
    }

    @Test
    void alreadyEnforcedEpochIsAdmittedAndTracked() {
        FenceState s = new FenceState(3, L0, false, FenceState.NONE, 0, 0, 0);
        FenceDecision d = s.decide(FenceMode.ENDPOINT, 3, L1, L0 | L1, false);
        Admit a = assertInstanceOf(Admit.class, d);
        assertEquals(FenceDecision.Why.ENFORCED, a.why());
        assertEquals(L0 | L1, a.next().unflushed());
        assertEquals(3, a.next().epoch());
    }

    /**
     * Found by the chaos test: a restarted request of epoch 15 waited in the fence queue while the
     * fence to 16 completed; released afterwards, it must not be overtaken by epoch-16 work.
     */
    @Test
    void anOlderEpochAdmittedLateRollsTheEpochBack() {
        FenceState s = new FenceState(16, 0, false, FenceState.NONE, 0, L1, 13);
        Admit late = assertInstanceOf(Admit.class, s.decide(FenceMode.ENDPOINT, 15, L1, L0 | L1, false));
        assertEquals(FenceDecision.Why.LATE, late.why());
        assertEquals(15, late.next().epoch());
        assertEquals(0, late.next().pinned());
        assertInstanceOf(StartStrongFence.class, late.next().decide(FenceMode.ENDPOINT, 16, L0, L0 | L1, false),
                "epoch-16 work on another lane fences over it");
    }

    @Test
    void aFenceCannotVouchForOlderWorkAdmittedAfterItStarted() {
        FenceState flying = new FenceState(4, L0, false, FenceState.NONE, 0, 0, 0)
                .decide(FenceMode.ENDPOINT, 6, L1, L0 | L1, false).next();
        assertEquals(6, flying.inFlightEpoch());
        FenceState meanwhile = assertInstanceOf(Admit.class, flying.decide(FenceMode.ENDPOINT, 4, L1, L0 | L1,
                false)).next();
        assertEquals(4, meanwhile.strongFenceCompleted().epoch(), "the fence started before the epoch-4 request");
    }

    /** The allocation-free shortcut must agree with the full decision wherever it says yes. */
    @Test
    void admitsUnchangedAgreesWithDecide() {
        java.util.Random rnd = new java.util.Random(20261129);
        System.out.println("admitsUnchangedAgreesWithDecide seed 20261129");
        int shortcuts = 0;
        for (int i = 0; i < 200_000; i++) {
            long epoch = rnd.nextInt(4);
            boolean flying = rnd.nextBoolean();
            FenceState s = new FenceState(epoch, rnd.nextInt(8), rnd.nextBoolean(),
                    flying ? epoch + 1 + rnd.nextInt(2) : FenceState.NONE, flying ? rnd.nextInt(8) : 0,
                    rnd.nextInt(4) == 0 ? 1L << rnd.nextInt(3) : 0, rnd.nextInt(2));
            long e = rnd.nextInt(6);
            long lanes = 1L << rnd.nextInt(3);
            if (s.admitsUnchanged(e, lanes)) {
                shortcuts++;
                FenceDecision d = s.decide(FenceMode.ENDPOINT, e, lanes, 0b111, rnd.nextBoolean());
                Admit a = assertInstanceOf(Admit.class, d, s + " e" + e + " lanes " + lanes);
                assertEquals(s, a.next(), s + " e" + e + " lanes " + lanes);
            }
        }
        assertTrue(shortcuts > 1000, "the shortcut was exercised: " + shortcuts);
    }

    @Test
    void nothingPrecedingFastForwardsTheEpoch() {
        FenceDecision d = FenceState.initial().decide(FenceMode.ENDPOINT, 5, L1, L0 | L1, false);
        Admit a = assertInstanceOf(Admit.class, d);
        assertEquals(FenceDecision.Why.FAST_FORWARD, a.why());
        assertEquals(5, a.next().epoch());
        assertEquals(L1, a.next().unflushed());
    }

    @Test
    void singleSameLaneTakesTheWeakPathAdvancesAndClears() {
        FenceState s = new FenceState(0, L1, false, FenceState.NONE, 0, 0, 0);
        WeakFence w = assertInstanceOf(WeakFence.class, s.decide(FenceMode.ENDPOINT, 1, L1, L0 | L1, false));
        assertEquals(1, w.lane());
        assertEquals(1, w.next().epoch());
        assertEquals(L1, w.next().unflushed(), "the record now holds only the admitted request's lane");
    }

    /**
     * Found by the demo's model check: after a weak fence on lane 1 advanced the epoch, a request of
     * that same epoch on lane 0 must not be admitted, or it overtakes the pre-fence work on lane 1.
     */
    @Test
    void weakFenceAdvancesTheEpochOnlyForItsOwnLane() {
        FenceState s = new FenceState(0, L1, false, FenceState.NONE, 0, 0, 0);
        FenceState afterWeak = assertInstanceOf(WeakFence.class, s.decide(FenceMode.ENDPOINT, 1, L1, L0 | L1, false))
                .next();
        assertEquals(L1, afterWeak.pinned());
        assertInstanceOf(Admit.class, afterWeak.decide(FenceMode.ENDPOINT, 1, L1, L0 | L1, false),
                "same epoch, same lane: ordered by the lane");
        StartStrongFence f = assertInstanceOf(StartStrongFence.class,
                afterWeak.decide(FenceMode.ENDPOINT, 1, L0, L0 | L1, false), "same epoch, other lane");
        assertEquals(L1, f.lanes());
        assertInstanceOf(Defer.class, f.next().decide(FenceMode.ENDPOINT, 1, L0, L0 | L1, false),
                "the pin holds while the fence flies");
        FenceState done = f.next().strongFenceCompleted();
        assertEquals(0, done.pinned());
        assertEquals(1, done.epoch());
        assertInstanceOf(Admit.class, done.decide(FenceMode.ENDPOINT, 1, L0, L0 | L1, false));
        Admit older = assertInstanceOf(Admit.class, afterWeak.decide(FenceMode.ENDPOINT, 0, L0, L0 | L1, false),
                "an older epoch is never held back");
        assertEquals(0, older.next().epoch(), "but the epoch rolls back to it");
    }

    @Test
    void otherLaneStartsOneStrongFenceOverTheRecordedLanes() {
        FenceState s = new FenceState(0, L0, false, FenceState.NONE, 0, 0, 0);
        StartStrongFence f = assertInstanceOf(StartStrongFence.class,
                s.decide(FenceMode.ENDPOINT, 1, L1, L0 | L1, false));
        assertEquals(L0, f.lanes());
        assertTrue(f.next().fenceInFlight());
        assertEquals(1, f.next().inFlightEpoch());
        assertEquals(0, f.next().epoch(), "the epoch advances only when the fence completes");
        assertEquals(0, f.next().unflushed(), "the fence consumes the record");
    }

    @Test
    void onlyOneStrongFenceInFlight() {
        FenceState inFlight = new FenceState(0, 0, false, 1, L0, 0, 0);
        assertInstanceOf(Defer.class, inFlight.decide(FenceMode.ENDPOINT, 1, L1, L0 | L1, false));
        assertInstanceOf(Defer.class, inFlight.decide(FenceMode.ENDPOINT, 2, L0, L0 | L1, false));
        // a request of an already-enforced epoch is not held back by the fence
        assertInstanceOf(Admit.class, inFlight.decide(FenceMode.ENDPOINT, 0, L0, L0 | L1, false));
        assertEquals(0, inFlight.decide(FenceMode.ENDPOINT, 0, L0, L0 | L1, false).next().strongFenceCompleted()
                .epoch(), "but the fence can then not vouch for epoch 1");
    }

    @Test
    void queuedRequestsGoFirst() {
        FenceState s = new FenceState(0, 0, false, FenceState.NONE, 0, 0, 0);
        assertInstanceOf(Defer.class, s.decide(FenceMode.ENDPOINT, 1, L0, L0, true));
    }

    @Test
    void completionAdvancesEpochAndKeepsWorkAdmittedMeanwhile() {
        FenceState s = new FenceState(0, L0 | L1, false, FenceState.NONE, 0, 0, 0);
        FenceState flying = s.decide(FenceMode.ENDPOINT, 4, L2, L0 | L1 | L2, false).next();
        FenceState done = flying.strongFenceCompleted();
        assertEquals(4, done.epoch());
        assertFalse(done.fenceInFlight());
        FenceState meanwhile = flying.decide(FenceMode.ENDPOINT, 0, L2, L0 | L1 | L2, false).next();
        assertEquals(L2, meanwhile.strongFenceCompleted().unflushed(),
                "work admitted during the fence was not covered by it");
    }

    @Test
    void failureKeepsTheEpochAndTheLanesAndIsDirty() {
        FenceState s = new FenceState(2, L0 | L1, false, FenceState.NONE, 0, 0, 0);
        FenceState failed = s.decide(FenceMode.ENDPOINT, 3, L0, L0 | L1, false).next().strongFenceFailed();
        assertEquals(2, failed.epoch());
        assertEquals(L0 | L1, failed.unflushed());
        assertTrue(failed.dirty());
        assertFalse(failed.fenceInFlight());
    }

    @Test
    void dirtyRecordWidensToAllLiveLanesAndIsConsumed() {
        FenceState s = new FenceState(0, L0, true, FenceState.NONE, 0, 0, 0);
        StartStrongFence f = assertInstanceOf(StartStrongFence.class,
                s.decide(FenceMode.ENDPOINT, 1, L1, L0 | L1 | L2, false));
        assertEquals(L0 | L1 | L2, f.lanes());
        assertFalse(f.next().dirty());
    }

    @Test
    void dirtyTopologyKeepsTheWeakPathOnOneLiveLane() {
        // The seed's CI failure: a dirty record turned every replayed atomic into a strong fence.
        FenceState s = new FenceState(0, L0, true, FenceState.NONE, 0, 0, 0);
        assertInstanceOf(WeakFence.class, s.decide(FenceMode.ENDPOINT, 1, L0, L0 | L1, false));
    }

    /** The dirty flag's lifecycle (docs/fences.md), applied to the record as the endpoint applies it. */
    @Test
    void dirtyLifecycle() {
        FenceState tracked = new FenceState(0, L0, false, FenceState.NONE, 0, 0, 0);
        assertTrue(tracked.slotChanged(0, true).dirty(), "x -> null of a tracked lane");
        assertTrue(tracked.slotChanged(0, true).slotChanged(0, false).dirty(), "null -> x after that stays dirty");
        assertFalse(tracked.slotChanged(0, false).dirty(), "null -> x of a clean tracked lane");
        assertFalse(tracked.slotChanged(1, true).dirty(), "untracked lane: never dirty");
        FenceState fenced = tracked.slotChanged(0, true).decide(FenceMode.ENDPOINT, 1, L1, L1, false).next();
        assertFalse(fenced.dirty(), "the strong fence consumes the flag when it starts");
        FenceState clean = fenced.strongFenceCompleted();
        assertFalse(clean.dirty(), "clean after a successful strong fence");
        assertFalse(clean.withUnflushed(0).slotChanged(0, true).dirty(), "nothing tracked: not dirty");
        FenceState flying = tracked.decide(FenceMode.ENDPOINT, 1, L1, L0 | L1, false).next();
        assertFalse(flying.dirty());
        assertTrue(flying.withUnflushed(L0).slotChanged(0, true).strongFenceFailed().dirty(),
                "a change during a failing fence leaves it dirty");
    }

    /** Found by the chaos test (seeds 1412 and 2812 of 2000): two weak fences in a row on one lane. */
    @Test
    void changeOfThePinnedLaneVoidsEveryWeakFenceThatRestsOnIt() {
        FenceState s = new FenceState(3, L1, false, FenceState.NONE, 0, 0, 0);
        FenceState first = s.decide(FenceMode.ENDPOINT, 4, L1, L0 | L1, false).next();
        FenceState second = first.decide(FenceMode.ENDPOINT, 5, L1, L0 | L1, false).next();
        assertEquals(5, second.epoch());
        FenceState changed = second.slotChanged(1, true);
        assertEquals(3, changed.epoch(), "work of epochs 3 and 4 was ordered only by lane 1");
        assertTrue(changed.fenceRequired(4, L0));
    }

    @Test
    void changeOfThePinnedLaneVoidsTheWeakFence() {
        FenceState s = new FenceState(3, L1, false, FenceState.NONE, 0, 0, 0);
        FenceState weak = s.decide(FenceMode.ENDPOINT, 4, L1, L0 | L1, false).next();
        assertEquals(4, weak.epoch());
        FenceState changed = weak.slotChanged(1, true);
        assertEquals(3, changed.epoch(), "the weak fence's epoch is no longer enforced");
        assertEquals(0, changed.pinned());
        assertTrue(changed.fenceRequired(4, L1));
    }

    @Test
    void vanishedRecordedLaneWidensToAllLiveLanes() {
        FenceState s = new FenceState(0, L1, false, FenceState.NONE, 0, 0, 0);
        StartStrongFence f = assertInstanceOf(StartStrongFence.class,
                s.decide(FenceMode.ENDPOINT, 1, L0, L0 | L2, false));
        assertEquals(L0 | L2, f.lanes());
    }

    @Test
    void strongModeFlushesEveryLiveLane() {
        FenceState s = new FenceState(0, L0, false, FenceState.NONE, 0, 0, 0);
        StartStrongFence f = assertInstanceOf(StartStrongFence.class,
                s.decide(FenceMode.STRONG, 1, L0, L0 | L1 | L2, false));
        assertEquals(L0 | L1 | L2, f.lanes());
    }

    @Test
    void weakModeFallsBackToAStrongFenceWhenALaterLaneSpreadsTheWork() {
        // Weak mode is checked at connect, but a lane added afterwards can carry RMA too.
        FenceState s = new FenceState(0, L0, false, FenceState.NONE, 0, 0, 0);
        StartStrongFence f = assertInstanceOf(StartStrongFence.class, s.decide(FenceMode.WEAK, 1, L1, L0 | L1, false));
        assertEquals(L0, f.lanes());
    }

    @Test
    void weakModeAlwaysFencesTheRequestsLane() {
        FenceState s = new FenceState(0, L0, false, FenceState.NONE, 0, 0, 0);
        WeakFence w = assertInstanceOf(WeakFence.class, s.decide(FenceMode.WEAK, 1, L0, L0, false));
        assertEquals(0, w.lane());
        assertEquals(1, w.next().epoch());
    }
}
