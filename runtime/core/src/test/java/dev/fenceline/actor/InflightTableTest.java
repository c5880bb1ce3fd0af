package dev.fenceline.actor;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import java.util.concurrent.TimeUnit;

/** The in-flight table without an actor: order, sequence numbers, the low-water mark and retirement. */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class InflightTableTest {
    private final ComponentFixture f = new ComponentFixture();
    private final InflightTable t = new InflightTable();

    @Test
    void sequenceNumbersAreGivenAtFirstPostAndKeptAcrossARestart() {
        Request a = f.put(8, 0);
        Request b = f.put(8, 0);
        t.order(a);
        t.order(b);
        assertEquals(List.of(1L, 2L), List.of(a.seq, b.seq));
        t.number(a, 3);
        t.number(b, 1);
        assertEquals(0, a.firstSn);
        assertEquals(3, b.firstSn, "three numbers for a's three fragments");
        t.number(a, 3);
        assertEquals(0, a.firstSn, "a restart keeps the numbers");
        assertEquals(3, a.fragmentsOutstanding);
    }

    @Test
    void theLowWaterMarkIsTheOldestIncompleteRequestsFirstNumber() {
        Request a = f.put(8, 0);
        Request b = f.put(8, 0);
        assertEquals(0, t.lowWater(), "nothing numbered: the next number");
        t.number(a, 2);
        t.number(b, 1);
        assertEquals(0, t.lowWater());
        b.succeed(0);
        assertEquals(0, t.lowWater(), "a, older, is still incomplete");
        a.succeed(0);
        assertEquals(3, t.lowWater(), "everything complete: the next number");
    }

    @Test
    void aFragmentIsTakenOnceAndNotAfterItsRequestCompleted() {
        Request r = f.put(8, 0);
        t.order(r);
        t.admit(r);
        InflightTable.Fragment frag = new InflightTable.Fragment(r, 0, 0, 1, "s");
        t.track(10, frag);
        t.track(11, new InflightTable.Fragment(r, 1, 0, 1, "s"));
        assertSame(frag, t.take(10));
        assertNull(t.take(10), "once");
        r.succeed(0);
        assertNull(t.take(11), "its request is complete");
        assertNull(t.take(99));
    }

    @Test
    void flushesCountOnlyEarlierOutstandingOperations() {
        Request a = f.put(8, 0);
        Request flush = Request.flush(0);
        Request b = f.put(8, 0);
        for (Request r : List.of(a, flush, b)) {
            t.order(r);
        }
        t.admit(a);
        t.admit(b);
        assertEquals(1, t.outstandingBefore(flush.seq));
        t.retire(a);
        assertEquals(0, t.outstandingBefore(flush.seq));
        assertTrue(!t.isEmpty());
        t.retire(b);
        assertTrue(t.isEmpty());
    }

    @Test
    void clearingReturnsTheOutstandingInOrder() {
        Request a = f.put(8, 0);
        Request b = f.put(8, 0);
        Request c = f.put(8, 0);
        for (Request r : List.of(a, b, c)) {
            t.order(r);
        }
        t.admit(c);
        t.admit(a);
        t.admit(b);
        t.track(5, new InflightTable.Fragment(a, 0, 0, 1, "s"));
        assertEquals(List.of(a, b, c), t.clear());
        assertTrue(t.isEmpty());
        assertTrue(t.fragments().isEmpty());
    }

    @Test
    void aHeldFragmentHoldsFencedWorkOfLaterEpochsUntilItsAnswer() {
        Request early = f.put(8, 0);
        Request sameEpoch = f.put(8, 0);
        t.order(early);
        t.admit(early);
        t.track(7, new InflightTable.Fragment(early, 0, 0, 1, null));
        t.hold(7);
        t.hold(7);
        assertEquals(1, early.held, "held once");
        assertTrue(t.holding());
        assertTrue(t.heldBefore(1), "epoch 1 comes after a fence after it");
        assertTrue(!t.heldBefore(0), "its own epoch does not wait");
        assertTrue(!t.heldBefore(sameEpoch.epoch()));
        assertSame(early, t.take(7).request(), "its old connection answers");
        assertEquals(0, early.held);
        assertTrue(!t.holding() && !t.heldBefore(1));
    }

    @Test
    void whenTheEndpointEndsOnlyWithdrawnOrNeverSentFragmentsCountAsNotApplied() {
        Request revoked = f.put(8, 0);
        Request buffered = f.put(8, 0);
        Request parked = f.put(8, 0);
        Request held = f.put(8, 0);
        for (Request r : List.of(revoked, buffered, parked, held)) {
            t.order(r);
            t.admit(r);
        }
        t.track(1, new InflightTable.Fragment(revoked, 0, 0, 10, null)); // its connection withdrew it
        t.track(2, new InflightTable.Fragment(buffered, 0, 1, 20, null)); // a socket buffer may still apply it
        t.track(3, new InflightTable.Fragment(parked, 0, 0, 10, null)); // never left its lane's queue
        t.track(4, new InflightTable.Fragment(held, 0, 0, 10, null)); // its old connection's answer was awaited
        t.hold(4);
        Revocations said = new Revocations();
        said.revoke(new dev.fenceline.spi.RecordingLane(10, java.util.EnumSet.of(dev.fenceline.LaneType.RMA))
                .revocation(dev.fenceline.spi.Revocation.REVOKED));
        org.agrona.collections.LongHashSet parkedTokens = new org.agrona.collections.LongHashSet();
        parkedTokens.add(3);
        t.markMaybeApplied(parkedTokens, said);
        assertTrue(!revoked.mayHaveApplied, "withdrawn: not applied");
        assertTrue(buffered.mayHaveApplied, "a connection never asked: it may still apply");
        assertTrue(!parked.mayHaveApplied, "never sent");
        assertTrue(held.mayHaveApplied, "an answer was on its way: it may have applied");
    }
}
