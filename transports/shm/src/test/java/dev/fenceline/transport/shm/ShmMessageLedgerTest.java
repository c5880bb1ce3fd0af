package dev.fenceline.transport.shm;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.fenceline.spi.Revocation.Fate;
import java.nio.ByteBuffer;
import java.util.Arrays;
import org.junit.jupiter.api.Test;

/**
 * What a lane's ledger decides from the claim order, the answers taken and what revoking the gate
 * found. Single-threaded, so without the monitor the lane holds around each call.
 */
class ShmMessageLedgerTest {
    private static final long DIRECT = Long.MIN_VALUE;
    private final ShmMessageLedger ledger = new ShmMessageLedger();

    private void put(long token) {
        ledger.posted(token);
    }

    private ByteBuffer get(long token) {
        ByteBuffer dst = ByteBuffer.allocate(8);
        ledger.getSent(token, dst);
        ledger.posted(token);
        return dst;
    }

    private void activeMessage(long token) {
        ledger.activeMessageSent(token);
        ledger.posted(token);
    }

    @Test
    void aLivePeerAnswersWhatItTookExceptGetsAndMessagesStillRunning() {
        put(1);
        get(2);
        activeMessage(3); // taken completely: its answer is on the way
        ledger.postedDirect(DIRECT | 0); // being handled when revoked
        put(5);
        put(6);
        ledger.neverSent(9);
        ledger.markRevoked();

        ShmMessageLedger.Fates f = ledger.settle(new Gates.Revoked(3, true), true);

        assertEquals(Fate.ANSWER_FOLLOWS, f.fate(1));
        assertEquals(Fate.STOPPED, f.fate(2), "a get's buffer is let go: sent again rather than waited for");
        assertEquals(Fate.ANSWER_FOLLOWS, f.fate(3));
        assertEquals(Fate.REVOKED, f.fate(5));
        assertEquals(Fate.REVOKED, f.fate(6));
        assertEquals(Fate.REVOKED, f.fate(9), "never sent");
        assertEquals(0, f.directNotTaken());
        assertEquals(1, f.directStopped(), "a handler may take any time: not waited for");
        assertNull(ledger.takeGetBuffer(2), "no answer writes into a stopped get's buffer");
        assertTrue(ledger.awaitingAnswers(), "1 and 3 are held");

        // The answers come in claim order; only the held ones still reach the endpoint, once each.
        assertTrue(ledger.takeAnswer(1));
        assertTrue(ledger.awaited(1));
        assertTrue(ledger.takeAnswer(2));
        assertFalse(ledger.awaited(2));
        assertTrue(ledger.takeAnswer(3));
        assertTrue(ledger.awaited(3));
        assertTrue(ledger.takeAnswer(DIRECT | 0));
        assertFalse(ledger.directAnswered(), "abandoned at the revocation already");
        assertFalse(ledger.awaitingAnswers());
    }

    @Test
    void answersTakenBeforeTheRevocationCountAgainstTheGate() {
        put(1);
        activeMessage(2);
        activeMessage(3);
        put(4);
        put(5);
        assertTrue(ledger.takeAnswer(1));
        assertTrue(ledger.awaited(1), "before the revocation every answer is the endpoint's");
        ledger.markRevoked();

        // The gate counts every record the peer took, 1 included: then 2 completely, and 3 is being
        // handled (one record at a time: 4 and 5 were not taken).
        ShmMessageLedger.Fates f = ledger.settle(new Gates.Revoked(2, true), true);

        assertEquals(Fate.ANSWER_FOLLOWS, f.fate(2));
        assertEquals(Fate.STOPPED, f.fate(3), "a handler still running is not waited for");
        assertEquals(Fate.REVOKED, f.fate(4));
        assertEquals(Fate.REVOKED, f.fate(5));
        assertEquals(Fate.ANSWER_FOLLOWS, f.fate(1), "answered already");
    }

    @Test
    void aWriteTheGateCaughtInProgressIsWaitedFor() {
        put(1);
        put(2);
        ledger.markRevoked();

        ShmMessageLedger.Fates f = ledger.settle(new Gates.Revoked(0, true), true);

        assertEquals(Fate.ANSWER_FOLLOWS, f.fate(1), "a write ends within microseconds, and work is fenced behind it");
        assertEquals(Fate.REVOKED, f.fate(2));
        assertTrue(ledger.awaitingAnswers());
    }

    @Test
    void aDeadPeerAnswersNothingItTook() {
        put(1);
        ledger.postedDirect(DIRECT | 0);
        ledger.postedDirect(DIRECT | 1);
        put(4);
        ledger.markRevoked();

        ShmMessageLedger.Fates f = ledger.settle(new Gates.Revoked(2, false), false);

        assertEquals(Fate.STOPPED, f.fate(1), "it may have been applied");
        assertEquals(Fate.REVOKED, f.fate(4));
        assertEquals(1, f.directStopped());
        assertEquals(1, f.directNotTaken());
        assertFalse(ledger.awaitingAnswers(), "nothing held, no direct answer owed");
        ledger.givenUp();
        assertTrue(ledger.takeForgettable());
        assertFalse(ledger.takeForgettable(), "forgotten once");
    }

    @Test
    void anAnswerOutOfOrderChangesNothing() {
        assertFalse(ledger.takeAnswer(1), "nothing was posted");
        put(1);
        put(2);
        assertFalse(ledger.takeAnswer(2));
        assertTrue(ledger.takeAnswer(1));
        assertTrue(ledger.takeAnswer(2));
        assertFalse(ledger.takeAnswer(2), "answered already");
    }

    @Test
    void aGetsBufferIsTakenByItsAnswerOrForgottenWithAFailedWrite() {
        ByteBuffer dst = get(1);
        assertTrue(ledger.takeAnswer(1));
        assertSame(dst, ledger.takeGetBuffer(1));
        assertNull(ledger.takeGetBuffer(1));

        ByteBuffer unwritten = ByteBuffer.allocate(8);
        ledger.getSent(2, unwritten);
        ledger.writeFailed(2);
        assertNull(ledger.takeGetBuffer(2));

        get(3);
        ledger.givenUp();
        assertNull(ledger.takeGetBuffer(3), "let go at the give-up");
    }

    @Test
    void aGetWhoseAnswerWentNowhereIsStoppedAndSentAgain() {
        get(1);
        ledger.givenUp();
        assertTrue(ledger.takeAnswer(1));
        assertNull(ledger.takeGetBuffer(1));
        ledger.getDropped(1);
        ledger.markRevoked();

        ShmMessageLedger.Fates f = ledger.settle(new Gates.Revoked(1, false), true);

        assertEquals(Fate.STOPPED, f.fate(1));
    }

    @Test
    void theLanesDeathAbandonsHeldAndDirectAnswers() {
        put(1);
        put(2);
        ledger.postedDirect(DIRECT | 0);
        ledger.markRevoked();
        ShmMessageLedger.Fates f = ledger.settle(new Gates.Revoked(3, false), true);
        assertEquals(0, f.directNotTaken(), "taken completely: its answer is on the way");
        assertEquals(0, f.directStopped());
        ledger.givenUp();
        assertFalse(ledger.takeForgettable(), "answers are owed");

        long[] held = ledger.abandonHeld();
        Arrays.sort(held);
        assertArrayEquals(new long[] {1, 2}, held);
        assertEquals(1, ledger.abandonDirect());
        assertEquals(0, ledger.abandonDirect());
        assertFalse(ledger.awaitingAnswers());
        assertTrue(ledger.takeForgettable());
    }
}
