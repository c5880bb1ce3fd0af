package dev.fenceline.transport.ucx;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.fenceline.EndpointFailedException;
import dev.fenceline.FencelineException;
import dev.fenceline.OutcomeUnknownException;
import dev.fenceline.spi.DirectAnswers;
import dev.fenceline.spi.PostedOperation;
import dev.fenceline.spi.Revocation.Fate;
import dev.fenceline.spi.TransportOp;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

/**
 * What a ucx lane's ledger decides from where each operation stands when the endpoint gives the lane
 * up, without UCX: the operations name no lane (the ledger only passes it on), and their states are
 * set as the agent sets them. Single-threaded, so without the monitor the lane holds around each call.
 */
class UcxLaneLedgerTest {
    private final UcxLaneLedger ledger = new UcxLaneLedger();
    /** Stands in for the lane's flow control: each operation the ledger forgets gives a place back. */
    private final AtomicInteger forgotten = new AtomicInteger();

    /** @return a put the endpoint actor posted, remembered by the ledger and standing at {@code state} */
    private UcxOp put(long token, UcxOp.State state) {
        UcxOp u = UcxOp.of(null, TransportOp.rma(TransportOp.Kind.PUT, token, 0, null, ByteBuffer.allocate(8)), 0);
        assertTrue(ledger.register(u));
        u.state = state;
        return u;
    }

    private UcxOp answered(long token) {
        return ledger.answered(token, forgotten::incrementAndGet);
    }

    /** Tokens 1 to 4: one operation in each state the agent leaves it. */
    private UcxLaneLedger.Fates revokeOneOfEach(boolean dead, boolean failed) {
        return revokeOneOfEach(dead, failed, false);
    }

    private UcxLaneLedger.Fates revokeOneOfEach(boolean dead, boolean failed, boolean closed) {
        UcxOp queued = put(1, UcxOp.State.QUEUED);
        put(2, UcxOp.State.SENT);
        put(3, UcxOp.State.POSTED);
        UcxOp withdrawn = put(4, UcxOp.State.WITHDRAWN);
        UcxLaneLedger.Fates f = ledger.revoke(dead, failed, closed);
        assertEquals(Fate.REVOKED, f.fate(1), "the agent had not taken it");
        assertEquals(UcxOp.State.WITHDRAWN, queued.state, "the agent skips it");
        assertFalse(ledger.sendable(queued));
        assertEquals(Fate.REVOKED, f.fate(4));
        assertEquals(UcxOp.State.WITHDRAWN, withdrawn.state);
        assertNull(answered(1));
        assertTrue(ledger.ended());
        return f;
    }

    @Test
    void aLivePeerMayStillApplyARequestAndUctCompletesWhatTheHardwareHas() {
        UcxLaneLedger.Fates f = revokeOneOfEach(false, false);

        assertEquals(Fate.MAY_STILL_APPLY, f.fate(2), "the target's window recognizes a copy sent again");
        assertEquals(Fate.ANSWER_FOLLOWS, f.fate(3), "held: UCT completes it");
        assertTrue(ledger.owesAnswers());
        assertEquals(Fate.ANSWER_FOLLOWS, f.fate(99), "answered already");
    }

    @Test
    void aDeadPeerAppliesNoRequestFromNowOn() {
        UcxLaneLedger.Fates f = revokeOneOfEach(true, false);

        assertEquals(Fate.STOPPED, f.fate(2));
        assertEquals(Fate.ANSWER_FOLLOWS, f.fate(3), "the channel lives: UCT still completes it");
        assertTrue(ledger.owesAnswers());
    }

    @Test
    void aFailedChannelsHardwareOperationIsAnsweredByItsCompletion() {
        UcxLaneLedger.Fates f = revokeOneOfEach(false, true);

        assertEquals(Fate.MAY_STILL_APPLY, f.fate(2));
        assertEquals(Fate.ANSWER_FOLLOWS, f.fate(3), "a copy under way may still land: held for UCT's completion");
        assertTrue(ledger.owesAnswers());
        assertNotNull(answered(3), "its completion is delivered");
        assertFalse(ledger.owesAnswers());
    }

    @Test
    void onceTheAgentClosedAHardwareOperationMayStillApply() {
        UcxLaneLedger.Fates f = revokeOneOfEach(false, true, true);

        assertEquals(Fate.MAY_STILL_APPLY, f.fate(2));
        assertEquals(Fate.MAY_STILL_APPLY, f.fate(3), "no completion comes after the agent's last progress");
        assertFalse(ledger.owesAnswers());
        assertNull(answered(3), "not held: a completion goes nowhere");
    }

    @Test
    void aDeadPeerOnAFailedChannelStopsEverythingSent() {
        UcxLaneLedger.Fates f = revokeOneOfEach(true, true);

        assertEquals(Fate.STOPPED, f.fate(2));
        assertEquals(Fate.STOPPED, f.fate(3));
        assertFalse(ledger.owesAnswers());
        assertEquals(0, f.mayApply().size());
    }

    @Test
    void operationsPostedOnADeadOrEndedLaneAreNeverSent() {
        ledger.neverSent(7); // posted after the lane died
        put(8, UcxOp.State.QUEUED);
        ledger.end();
        assertTrue(ledger.ended());
        UcxOp late = UcxOp.of(null, TransportOp.rma(TransportOp.Kind.GET, 9, 0, null, ByteBuffer.allocate(8)), 0);
        assertFalse(ledger.register(late), "the lane ended first");
        assertFalse(ledger.sendable(late), "not remembered, and ended");

        UcxLaneLedger.Fates f = ledger.revoke(false, false, false);

        assertEquals(Fate.REVOKED, f.fate(7));
        assertEquals(Fate.REVOKED, f.fate(8));
        assertEquals(Fate.REVOKED, f.fate(9));
        assertFalse(ledger.owesAnswers());
    }

    @Test
    void theAgentSendsOnlyWhatTheEndpointHasNotGivenUp() {
        UcxOp a = put(1, UcxOp.State.QUEUED);
        UcxOp b = put(2, UcxOp.State.QUEUED);
        assertTrue(ledger.sendable(a));
        a.state = UcxOp.State.SENT;
        assertFalse(ledger.sendable(a), "sent already");
        ledger.end();
        assertFalse(ledger.sendable(b));
        assertEquals(UcxOp.State.WITHDRAWN, b.state, "withdrawn when the agent reaches it");

        UcxLaneLedger.Fates f = ledger.revoke(false, false, false);

        assertEquals(Fate.REVOKED, f.fate(2));
        assertEquals(Fate.MAY_STILL_APPLY, f.fate(1));
    }

    @Test
    void heldAnswersAreDeliveredOnceAndOthersGoNowhere() {
        put(1, UcxOp.State.SENT);
        UcxOp before = answered(1);
        assertEquals(1, before.token, "before the revocation every answer is the endpoint's");
        assertEquals(1, forgotten.get());
        UcxOp posted = put(2, UcxOp.State.POSTED);
        put(3, UcxOp.State.SENT);
        put(4, UcxOp.State.POSTED);

        ledger.revoke(false, false, false);
        assertTrue(ledger.owesAnswers());

        assertSame(posted, answered(2), "held: its completion is delivered");
        assertEquals(2, forgotten.get());
        assertNull(answered(2), "once");
        assertNull(answered(3), "may still apply: its answer goes nowhere");
        assertEquals(2, forgotten.get(), "forgotten at the revocation already");
        assertTrue(ledger.owesAnswers(), "4 is still held");
        assertEquals(4, answered(4).token, "delivered");
        assertFalse(ledger.owesAnswers());
    }

    @Test
    void theAgentsCloseAbandonsHeldAnswersOnlyAfterTheRevocation() {
        put(1, UcxOp.State.POSTED);
        put(2, UcxOp.State.POSTED);
        List<Long> abandoned = new ArrayList<>();
        ledger.abandonHeld(abandoned::add);
        assertEquals(List.of(), abandoned, "not revoked: nothing is held");

        ledger.revoke(false, false, false);
        ledger.abandonHeld(abandoned::add);

        abandoned.sort(null);
        assertEquals(List.of(1L, 2L), abandoned);
        assertFalse(ledger.owesAnswers());
        assertNull(answered(1), "failed as unknown already");
        assertEquals(0, forgotten.get(), "forgotten with the channel: a late completion finds nothing");
        ledger.abandonHeld(abandoned::add);
        assertEquals(2, abandoned.size(), "once");
    }

    /** A calling thread's operation: what the lane does with it is recorded in {@link #events}. */
    private final class Posted implements PostedOperation {
        final TransportOp op;
        final long sn;
        final List<String> events;

        Posted(long token, long sn, List<String> events) {
            this.op = TransportOp.rma(TransportOp.Kind.PUT, token, 0, null, ByteBuffer.allocate(8));
            this.sn = sn;
            this.events = events;
        }

        UcxOp number() {
            return number(false);
        }

        UcxOp number(boolean answerMayWait) {
            UcxOp u = ledger.numberPosted(null, this, sn, answerMayWait);
            ledger.track(u);
            return u;
        }

        @Override
        public TransportOp op() {
            return op;
        }

        @Override
        public long sequence() {
            return sn;
        }

        @Override
        public void completed(long value) {
            events.add("completed " + op.token());
        }

        @Override
        public void failed(FencelineException error) {
            events.add("failed " + op.token());
        }

        @Override
        public void returned() {
            events.add("returned " + op.token() + " after " + forgotten.get() + " forgotten");
        }
    }

    @Test
    void postedOperationsAreNumberedInOrderAndCarryTheLowWaterMark() {
        List<String> events = new ArrayList<>();
        UcxOp first = new Posted(100, 40, events).number();
        assertFalse(ledger.directAnswersMayWait());
        UcxOp second = new Posted(101, 41, events).number(true);
        assertTrue(ledger.directAnswersMayWait(), "the second's answer may be held back");
        assertEquals(UcxLane.POSTED, first.token, "the lane's own tokens");
        assertEquals(UcxLane.POSTED | 1, second.token);
        assertEquals(40, first.lowWater);
        assertEquals(40, second.lowWater, "the first is unanswered");

        assertSame(first, answered(first.token));
        assertTrue(ledger.directAnswersMayWait());
        assertSame(second, answered(second.token));
        assertFalse(ledger.directAnswersMayWait(), "answered: nothing held to ask for");
        UcxOp third = new Posted(102, 42, events).number();
        assertEquals(42, third.lowWater, "everything below the oldest unanswered one was answered");
        assertEquals(List.of(), events, "completing it is the caller's, after the lock");
    }

    @Test
    void postedOperationsGivenBackAreAskedAfterByTheEndpointsTokens() {
        for (boolean dead : new boolean[] {false, true}) {
            UcxLaneLedger l = new UcxLaneLedger();
            List<String> events = new ArrayList<>();
            forgotten.set(0);
            UcxOp sent = l.numberPosted(null, new Posted(100, 1, events), 1, true);
            l.track(sent);
            sent.state = UcxOp.State.SENT;
            UcxOp unsent = l.numberPosted(null, new Posted(101, 2, events), 2, true);
            l.track(unsent);
            assertTrue(l.directAnswersMayWait());

            l.end();
            l.returnPosted(forgotten::incrementAndGet);
            assertEquals(List.of("returned 100 after 1 forgotten", "returned 101 after 2 forgotten"), events,
                    "oldest first, each forgotten before it is given back");
            assertEquals(UcxOp.State.WITHDRAWN, unsent.state, "the agent skips it");
            assertFalse(l.directAnswersMayWait(), "given back: nothing to ask for");
            assertNull(l.answered(sent.token, forgotten::incrementAndGet), "given back: its answer goes nowhere");
            assertEquals(2, forgotten.get());

            UcxLaneLedger.Fates f = l.revoke(dead, false, false);

            assertEquals(dead ? Fate.STOPPED : Fate.MAY_STILL_APPLY, f.fate(100), "dead: " + dead);
            assertEquals(Fate.REVOKED, f.fate(101));
            assertEquals(Fate.ANSWER_FOLLOWS, f.fate(sent.token), "not a token the endpoint knows");
        }
    }

    /** The endpoint's ledger for direct messages, telling {@code told} what it hears. */
    private static DirectAnswers recording(List<String> told) {
        return new DirectAnswers() {
            @Override
            public long queued() {
                throw new AssertionError("the lane numbers them");
            }

            @Override
            public void answered(long index, FencelineException error) {
                told.add("answered " + index);
            }

            @Override
            public void abandoned(int count, FencelineException error) {
                told.add("abandoned " + count + " " + error.getClass().getSimpleName());
            }
        };
    }

    @Test
    void directMessagesAreAnsweredInOrderAndCountedAtTheRevocation() {
        // Also: whether an unanswered one's answer may be held back at the target (then a flush asks).
        List<String> told = new ArrayList<>();
        ledger.answersTo(recording(told));
        UcxOp[] d = new UcxOp[5];
        for (int i = 0; i < d.length; i++) {
            // 1 and 4 say their answer may wait (the target may hold it back)
            d[i] = UcxOp.direct(null, UcxLane.DIRECT | i, 1, ByteBuffer.allocate(0), ByteBuffer.allocate(0), 0,
                    i == 1 || i == 4);
            ledger.directQueued(d[i]);
        }
        ledger.directNotQueued(); // 4: the agent closed meanwhile
        assertTrue(ledger.directAnswersMayWait(), "1 is unanswered");
        d[0].state = UcxOp.State.SENT;
        d[1].state = UcxOp.State.SENT;
        d[2].state = UcxOp.State.SENT;

        assertFalse(ledger.directAnswered(d[1].token), "answers come in order");
        assertTrue(ledger.directAnswered(d[0].token));
        ledger.reportDirect(d[0].token, null);
        assertTrue(ledger.directAnswersMayWait(), "1 is still unanswered");

        UcxLaneLedger.Fates f = ledger.revoke(false, false, false);
        assertEquals(2, f.directSent(), "1 and 2 may have run their handlers");
        assertFalse(ledger.directAnswersMayWait(), "none left to ask for");
        assertEquals(1, f.directWithdrawn());
        assertEquals(UcxOp.State.WITHDRAWN, d[3].state, "the agent skips it");
        assertFalse(ledger.directAnswered(d[1].token), "reported at the revocation already");
        ledger.reportRevoked(f, null, false);

        assertEquals(List.of("answered 0", "abandoned 2 " + OutcomeUnknownException.class.getSimpleName(),
                "abandoned 1 " + EndpointFailedException.class.getSimpleName()), told);
    }

    @Test
    void aFlushHasNothingToAskForOnceTheMessagesWhoseAnswersMayWaitAreAnswered() {
        ledger.answersTo(recording(new ArrayList<>()));
        UcxOp first = UcxOp.direct(null, UcxLane.DIRECT, 1, ByteBuffer.allocate(0), ByteBuffer.allocate(0), 0, false);
        UcxOp second = UcxOp.direct(null, UcxLane.DIRECT | 1, 1, ByteBuffer.allocate(0), ByteBuffer.allocate(0), 0,
                true);
        ledger.directQueued(first);
        assertFalse(ledger.directAnswersMayWait(), "a lone message is answered at once");
        ledger.directQueued(second);
        assertTrue(ledger.directAnswersMayWait());
        assertTrue(ledger.directAnswered(first.token));
        assertTrue(ledger.directAnswersMayWait());
        assertTrue(ledger.directAnswered(second.token));
        assertFalse(ledger.directAnswersMayWait());
    }

    /**
     * The target knows the tokens; a reply may answer only a request it was sent. One naming an
     * operation still queued, or in UCT's hardware path (a zero-copy get the device may still be
     * writing into the caller's buffer), must not complete it.
     */
    @Test
    void onlyASentRequestAwaitsAReply() {
        put(1, UcxOp.State.QUEUED);
        put(2, UcxOp.State.SENT);
        put(3, UcxOp.State.POSTED);
        assertFalse(ledger.awaitsReply(1), "queued: nothing was sent");
        assertTrue(ledger.awaitsReply(2));
        assertFalse(ledger.awaitsReply(3), "on the hardware path: UCT completes it, not a reply");
        assertTrue(ledger.awaitsReply(9), "unknown (revoked, or answered already): ignored, not a lie");
    }
}
