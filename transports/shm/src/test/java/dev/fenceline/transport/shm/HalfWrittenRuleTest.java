package dev.fenceline.transport.shm;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.fenceline.transport.shm.HalfWrittenRule.Verdict;
import org.junit.jupiter.api.Test;

/** The skip rule for half-written inbox records, on positions and times the test makes up. */
class HalfWrittenRuleTest {
    private static final long TICK = 100_000_000L;
    private static final long AFTER = 5_000_000_000L;

    @Test
    void aRecordClaimedBeforeADeathIsSkippedOnceTheReadPositionStoodStillForATick() {
        HalfWrittenRule r = new HalfWrittenRule(AFTER);
        r.deathSeen(640); // the dead process claimed somewhere below 640
        assertEquals(Verdict.NONE, r.tick(0, 512, 704), "first look at 512: it may just be being read");
        assertFalse(r.asked());
        assertEquals(Verdict.UNBLOCK, r.tick(TICK, 512, 704), "still at 512 a tick later, below 640");
        assertTrue(r.asked());
        assertTrue(r.take(704, 512));
        assertFalse(r.asked(), "taken once");
        // The next record, also the dead one's (one per thread), is skipped in its turn.
        assertEquals(Verdict.NONE, r.tick(2 * TICK, 576, 704));
        assertEquals(Verdict.UNBLOCK, r.tick(3 * TICK, 576, 704));
        assertTrue(r.take(704, 576));
    }

    @Test
    void aRecordClaimedAfterEveryDeathIsNeverSkippedForIt() {
        HalfWrittenRule r = new HalfWrittenRule(AFTER);
        r.deathSeen(640);
        assertEquals(Verdict.NONE, r.tick(0, 640, 704));
        for (int t = 1; t < 50; t++) { // 4.9 s: a stopped live producer
            assertEquals(Verdict.NONE, r.tick(t * TICK, 640, 704), "tick " + t);
        }
        assertFalse(r.asked());
        // Past inbox-unblock-after only the directory's evidence of some process gone skips it.
        assertEquals(Verdict.UNBLOCK_IF_SOME_PROCESS_DIED, r.tick(51 * TICK, 640, 704));
        assertFalse(r.asked(), "nothing asked until the directory says so");
    }

    @Test
    void aNeverKnownProcessesRecordIsSkippedWhenTheDirectoryShowsAProcessGone() {
        HalfWrittenRule r = new HalfWrittenRule(AFTER);
        assertEquals(Verdict.NONE, r.tick(0, 0, 64));
        assertEquals(Verdict.NONE, r.tick(AFTER, 0, 64), "not yet past inbox-unblock-after");
        assertEquals(Verdict.UNBLOCK_IF_SOME_PROCESS_DIED, r.tick(AFTER + TICK, 0, 64));
        r.staleRemoved(0);
        assertTrue(r.asked());
        assertTrue(r.take(64, 0), "everything claimed until the removal is suspect now");
    }

    @Test
    void aRequestForAPositionTheReaderHasLeftIsDropped() {
        HalfWrittenRule r = new HalfWrittenRule(AFTER);
        r.deathSeen(640);
        r.tick(0, 512, 704);
        assertEquals(Verdict.UNBLOCK, r.tick(TICK, 512, 704));
        assertFalse(r.take(704, 576), "the record at 512 was committed and read meanwhile: 576 is not skipped");
        assertFalse(r.asked());
    }

    @Test
    void anEmptyRingIsNeverStuckAndANewClaimStartsAfresh() {
        HalfWrittenRule r = new HalfWrittenRule(AFTER);
        r.deathSeen(640);
        assertEquals(Verdict.NONE, r.tick(0, 512, 512), "nothing waits");
        assertEquals(Verdict.NONE, r.tick(TICK, 512, 576), "a record claimed since the last look is new");
        assertEquals(Verdict.UNBLOCK, r.tick(2 * TICK, 512, 576));
    }
}
