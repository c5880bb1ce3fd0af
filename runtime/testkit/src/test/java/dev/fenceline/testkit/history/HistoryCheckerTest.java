package dev.fenceline.testkit.history;

import static org.junit.jupiter.api.Assertions.assertDoesNotThrow;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.fenceline.AtomicOp;
import dev.fenceline.Endpoint;
import dev.fenceline.RemoteKey;
import dev.fenceline.spi.RequestTrace;
import dev.fenceline.spi.support.Tracing;
import java.nio.ByteBuffer;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import java.util.concurrent.TimeUnit;

/**
 * The checker must be able to fail: a scripted endpoint that breaks each guarantee on purpose (a
 * stale fetch after a fence, a stale get, a flush that overtakes, a request that never completes, a
 * double-applied ADD) is caught by the matching assertion, and an honest one passes.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class HistoryCheckerTest {
    private final RemoteKey key = new RemoteKey(UUID.randomUUID(), 1, 0x1000, 4096, java.util.Map.of());

    @Test
    void aFetchThatMissesAnAddFencedBeforeItIsCaught() {
        History h = new History();
        ScriptedEndpoint s = new ScriptedEndpoint();
        Endpoint ep = h.record(s);
        ep.atomicPost64(AtomicOp.ADD, 0x1000, key, 5);
        ep.fence();
        s.fetchAnswer = 0; // stale: the fenced ADD is not in it
        ep.atomicFetch64(AtomicOp.ADD, 0x1000, key, 0);
        s.completeAll();
        AssertionError e = assertThrows(AssertionError.class, () -> HistoryChecker.of(h).assertFencesHeld());
        assertTrue(e.getMessage().contains("fences hold"), e.getMessage());
        s.fetchAnswer = 5;
        History ok = new History();
        Endpoint ep2 = ok.record(s);
        ep2.atomicPost64(AtomicOp.ADD, 0x1000, key, 5);
        ep2.fence();
        ep2.atomicFetch64(AtomicOp.ADD, 0x1000, key, 0);
        s.completeAll();
        assertDoesNotThrow(() -> HistoryChecker.of(ok).assertFencesHeld().assertEveryRequestCompleted());
    }

    @Test
    void aGetThatReadsOlderThanAFencedPutIsCaught() {
        History h = new History();
        ScriptedEndpoint s = new ScriptedEndpoint();
        Endpoint ep = h.record(s);
        ep.put(ByteBuffer.wrap(new byte[] {7, 7}), 0x1000, key);
        ep.fence();
        s.getAnswer = 0;
        ep.get(ByteBuffer.allocate(2), 0x1000, key);
        s.completeAll();
        assertThrows(AssertionError.class, () -> HistoryChecker.of(h).assertFencesHeld());
    }

    /**
     * A get, a fence, a put over the same bytes: the get must not return what the put wrote (it
     * did when a get whose answer was lost with its lane was read again after the put landed).
     * Reading the memory's first value, or an unordered put's bytes, is fine.
     */
    @Test
    void aGetThatReadsWhatAPutFencedAfterItWroteIsCaught() {
        History h = new History();
        ScriptedEndpoint s = new ScriptedEndpoint();
        Endpoint ep = h.record(s);
        s.getAnswer = 9;
        ep.get(ByteBuffer.allocate(2), 0x1000, key);
        ep.fence();
        ep.put(ByteBuffer.wrap(new byte[] {9, 9}), 0x1000, key);
        s.completeAll();
        AssertionError e = assertThrows(AssertionError.class, () -> HistoryChecker.of(h).assertFencesHeld());
        assertTrue(e.getMessage().contains("written by a put ordered after it"), e.getMessage());

        History first = new History();
        ScriptedEndpoint zero = new ScriptedEndpoint();
        Endpoint ep2 = first.record(zero);
        zero.getAnswer = 0; // the memory's first value
        ep2.get(ByteBuffer.allocate(2), 0x1000, key);
        ep2.fence();
        ep2.put(ByteBuffer.wrap(new byte[] {9, 9}), 0x1000, key);
        zero.completeAll();
        HistoryChecker.of(first).assertFencesHeld();

        History unordered = new History();
        ScriptedEndpoint same = new ScriptedEndpoint();
        Endpoint ep3 = unordered.record(same);
        same.getAnswer = 9;
        ep3.get(ByteBuffer.allocate(2), 0x1000, key);
        ep3.put(ByteBuffer.wrap(new byte[] {9, 9}), 0x1000, key); // no fence: the get may see it
        same.completeAll();
        HistoryChecker.of(unordered).assertFencesHeld();
    }

    @Test
    void aFlushThatCompletesBeforeEarlierWorkIsCaught() {
        History h = new History();
        ScriptedEndpoint s = new ScriptedEndpoint();
        Endpoint ep = h.record(s);
        ep.put(ByteBuffer.wrap(new byte[] {1}), 0x1000, key);
        ep.flush();
        ((CompletableFuture<?>) s.pending.get(1)).complete(null); // the flush first
        s.completeAll();
        assertThrows(AssertionError.class, () -> HistoryChecker.of(h).assertFlushesCovered());
    }

    @Test
    void aFlushThatCompletesBeforeTheTargetAppliedEarlierWorkIsCaught() {
        History h = new History();
        ScriptedEndpoint s = new ScriptedEndpoint() {
            @Override
            public CompletionStage<Void> put(ByteBuffer src, long remoteAddress, RemoteKey key) {
                RequestTrace t = Tracing.take();
                t.admitted(0, 7, true, true);
                traces.add(t);
                return CompletableFuture.completedFuture(null); // completes at once, applied later
            }
        };
        Endpoint ep = h.record(s);
        ep.put(ByteBuffer.wrap(new byte[] {1}), 0x1000, key);
        ep.flush();
        s.completeAll(); // the flush completes
        s.traces.get(0).visible(7); // and only then does the target apply the put
        AssertionError e = assertThrows(AssertionError.class, () -> HistoryChecker.of(h).assertFlushesCovered());
        assertTrue(e.getMessage().contains("before the target applied fragment 7"), e.getMessage());
    }

    @Test
    void aWriteThatCompletedButWasNeverAppliedIsCaught() {
        History h = new History();
        ScriptedEndpoint s = new ScriptedEndpoint() {
            @Override
            public CompletionStage<Void> put(ByteBuffer src, long remoteAddress, RemoteKey key) {
                Tracing.take().admitted(0, 3, true, true); // handed to a lane that reports what it applies
                return CompletableFuture.completedFuture(null); // acknowledged, and lost
            }
        };
        h.record(s).put(ByteBuffer.wrap(new byte[] {1}), 0x1000, key);
        AssertionError e = assertThrows(AssertionError.class, () -> HistoryChecker.of(h).assertExactlyOnce(a -> 0));
        assertTrue(e.getMessage().contains("completed, but the target never applied fragment 3"), e.getMessage());
    }

    @Test
    void aRequestThatNeverCompletesIsCaught() {
        History h = new History();
        Endpoint ep = h.record(new ScriptedEndpoint());
        ep.put(ByteBuffer.wrap(new byte[] {1}), 0x1000, key);
        assertThrows(AssertionError.class, () -> HistoryChecker.of(h).assertEveryRequestCompleted());
    }

    @Test
    void aDoubleAppliedAddIsCaught() {
        History h = new History();
        ScriptedEndpoint s = new ScriptedEndpoint();
        Endpoint ep = h.record(s);
        ep.atomicPost64(AtomicOp.ADD, 0x1000, key, 3);
        ep.atomicPost64(AtomicOp.ADD, 0x1000, key, 4);
        s.completeAll();
        assertDoesNotThrow(() -> HistoryChecker.of(h).assertExactlyOnce(a -> 7));
        assertThrows(AssertionError.class, () -> HistoryChecker.of(h).assertExactlyOnce(a -> 10));
    }

    @Test
    void anAddSaidNotAppliedButAppliedIsCaught() {
        History h = new History();
        ScriptedEndpoint s = new ScriptedEndpoint();
        h.record(s).atomicPost64(AtomicOp.ADD, 0x1000, key, 5);
        s.pending.get(0).completeExceptionally(new dev.fenceline.EndpointFailedException("gone"));
        AssertionError e = assertThrows(AssertionError.class, () -> HistoryChecker.of(h).assertExactlyOnce(a -> 5));
        assertTrue(e.getMessage().contains("received 5 from ADDs, expected 0"), e.getMessage());
        assertDoesNotThrow(() -> HistoryChecker.of(h).assertExactlyOnce(a -> 0));

        History unknown = new History();
        ScriptedEndpoint u = new ScriptedEndpoint();
        unknown.record(u).atomicPost64(AtomicOp.ADD, 0x1000, key, 5);
        u.pending.get(0).completeExceptionally(new dev.fenceline.OutcomeUnknownException("may apply"));
        assertDoesNotThrow(() -> HistoryChecker.of(unknown).assertExactlyOnce(a -> 5));
        assertDoesNotThrow(() -> HistoryChecker.of(unknown).assertExactlyOnce(a -> 0));
    }

    /**
     * An implicit operation completes with the next flush, whose error is the first of any implicit
     * operation before it: an ADD applied, a put refused, the flush failing with the refusal. The
     * ADD's recorded outcome is unknown, not the put's "not applied".
     */
    @Test
    void anImplicitOperationIsNotJudgedByAnotherOnesRefusal() {
        History h = new History();
        ScriptedEndpoint s = new ScriptedEndpoint();
        Endpoint ep = h.record(s);
        ep.atomicPostImplicit64(AtomicOp.ADD, 0x1000, key, 5);
        ep.putImplicit(ByteBuffer.wrap(new byte[] {1}), 0x1008, key);
        ep.flush();
        s.pending.get(s.pending.size() - 1).completeExceptionally(new dev.fenceline.RemoteAccessException(
                dev.fenceline.RemoteAccessException.Reason.REGION_CLOSED, "the put's region closed"));
        assertDoesNotThrow(() -> HistoryChecker.of(h).assertExactlyOnce(a -> 5).assertOutcomesTruthful());
        assertDoesNotThrow(() -> HistoryChecker.of(h).assertExactlyOnce(a -> 0), "or not applied: unknown");
    }

    @Test
    void aRefusalAboutAnAppliedPutIsCaught() {
        History h = new History();
        Visible s = new Visible();
        h.record(s).put(ByteBuffer.wrap(new byte[] {1}), 0x1000, key);
        s.traces.get(0).visible(0);
        s.pending.get(0).completeExceptionally(new dev.fenceline.RemoteAccessException(
                dev.fenceline.RemoteAccessException.Reason.REGION_CLOSED, "closed"));
        AssertionError e = assertThrows(AssertionError.class, () -> HistoryChecker.of(h).assertOutcomesTruthful());
        assertTrue(e.getMessage().contains("failed with RemoteAccessException (not applied), but the target applied"
                + " it"), e.getMessage());
    }

    @Test
    void aPutSentAgainAloneOverAFencedLaterPutIsCaught() {
        History h = new History();
        Visible s = new Visible();
        Endpoint ep = h.record(s);
        ep.put(ByteBuffer.wrap(new byte[] {1}), 0x1000, key);
        ep.fence();
        ep.put(ByteBuffer.wrap(new byte[] {2}), 0x1000, key);
        s.traces.get(0).visible(0);
        s.traces.get(1).visible(1);
        s.traces.get(0).admitted(1, 0, false, true); // restarted alone, on a lane without deduplication
        s.traces.get(0).visible(0); // it lands over #3, which is never sent again
        s.completeAll();
        AssertionError e = assertThrows(AssertionError.class, () -> HistoryChecker.of(h).assertFencesHeld());
        assertTrue(e.getMessage().contains("#1 PUT (after 0 fences) was applied last, after #3 PUT (after 1) it"
                + " overlaps"), e.getMessage());

        History apart = new History(); // the same, but the two puts write different bytes
        Visible v = new Visible();
        Endpoint ep2 = apart.record(v);
        ep2.put(ByteBuffer.wrap(new byte[] {1}), 0x1000, key);
        ep2.fence();
        ep2.put(ByteBuffer.wrap(new byte[] {2}), 0x1008, key);
        v.traces.get(0).visible(0);
        v.traces.get(1).visible(1);
        v.traces.get(0).admitted(1, 0, false, true);
        v.traces.get(0).visible(0);
        v.completeAll();
        assertDoesNotThrow(() -> HistoryChecker.of(apart).assertFencesHeld());
    }

    @Test
    void aGetMayReadEitherOfTwoUnorderedPutsFencedBeforeIt() {
        for (byte answer : new byte[] {1, 2}) {
            History h = new History();
            ScriptedEndpoint s = new ScriptedEndpoint();
            Endpoint ep = h.record(s);
            ep.put(ByteBuffer.wrap(new byte[] {1}), 0x1000, key);
            ep.put(ByteBuffer.wrap(new byte[] {2}), 0x1000, key); // no fence between: either lands last
            ep.fence();
            s.getAnswer = answer;
            ep.get(ByteBuffer.allocate(1), 0x1000, key);
            s.completeAll();
            assertDoesNotThrow(() -> HistoryChecker.of(h).assertFencesHeld(), "read " + answer);
        }
        History h = new History(); // but not the first of two fenced apart
        ScriptedEndpoint s = new ScriptedEndpoint();
        Endpoint ep = h.record(s);
        ep.put(ByteBuffer.wrap(new byte[] {1}), 0x1000, key);
        ep.fence();
        ep.put(ByteBuffer.wrap(new byte[] {2}), 0x1000, key);
        ep.fence();
        s.getAnswer = 1;
        ep.get(ByteBuffer.allocate(1), 0x1000, key);
        s.completeAll();
        AssertionError e = assertThrows(AssertionError.class, () -> HistoryChecker.of(h).assertFencesHeld());
        assertTrue(e.getMessage().contains("older than put #3, which was ordered before it"), e.getMessage());
    }

    @Test
    void aFetchThatSeesAnAddFencedAfterItIsCaught() {
        History h = new History();
        ScriptedEndpoint s = new ScriptedEndpoint();
        Endpoint ep = h.record(s);
        s.fetchAnswer = 5;
        ep.atomicFetch64(AtomicOp.ADD, 0x1000, key, 0);
        ep.fence();
        ep.atomicPost64(AtomicOp.ADD, 0x1000, key, 5);
        s.completeAll();
        AssertionError e = assertThrows(AssertionError.class, () -> HistoryChecker.of(h).assertFencesHeld());
        assertTrue(e.getMessage().contains("fetch #1 at 0x1000 saw 5 added, more than the 0 of the ADDs not"
                + " ordered after it"), e.getMessage());

        History unfenced = new History(); // without the fence, the later ADD may land first
        ScriptedEndpoint u = new ScriptedEndpoint();
        Endpoint ep2 = unfenced.record(u);
        u.fetchAnswer = 5;
        ep2.atomicFetch64(AtomicOp.ADD, 0x1000, key, 0);
        ep2.atomicPost64(AtomicOp.ADD, 0x1000, key, 5);
        u.completeAll();
        assertDoesNotThrow(() -> HistoryChecker.of(unfenced).assertFencesHeld());
    }

    @Test
    void aChaosRunsChecksCatchAnAtomicAppliedTwice() {
        History h = new History();
        ScriptedEndpoint s = new ScriptedEndpoint() {
            @Override
            public CompletionStage<Void> atomicPost64(AtomicOp op, long a, RemoteKey k, long v) {
                RequestTrace t = Tracing.take();
                t.admitted(0, 4, true, true);
                traces.add(t);
                return super.atomicPost64(op, a, k, v);
            }
        };
        h.record(s).atomicPost64(AtomicOp.OR, 0x1000, key, 1);
        s.traces.get(0).visible(4);
        s.traces.get(0).visible(4); // an OR applied twice reads the same: only visibility shows it
        s.completeAll();
        AssertionError e = assertThrows(AssertionError.class, () -> dev.fenceline.testkit.ChaosRun.check(h, a -> 1));
        assertTrue(e.getMessage().contains("applied its fragment 4 twice"), e.getMessage());
    }

    /** A scripted endpoint whose puts are handed to a lane that reports what the target applies. */
    static class Visible extends ScriptedEndpoint {
        private long sn;

        @Override
        public CompletionStage<Void> put(ByteBuffer src, long remoteAddress, RemoteKey key) {
            RequestTrace t = Tracing.take();
            t.admitted(0, sn++, true, true);
            traces.add(t);
            return super.put(src, remoteAddress, key);
        }
    }

    @Test
    void aStaleCopyAppliedAfterAFencedLaterWriteIsCaught() {
        History h = new History();
        Visible s = new Visible();
        Endpoint ep = h.record(s);
        ep.put(ByteBuffer.wrap(new byte[] {1}), 0x1000, key);
        ep.fence();
        ep.put(ByteBuffer.wrap(new byte[] {2}), 0x1000, key);
        s.traces.get(0).visible(0); // the first put: applied, its answer lost; sent again later
        s.traces.get(1).visible(1); // the fenced later put
        s.traces.get(0).visible(0); // and then the old copy, from the lane the endpoint gave up
        s.completeAll();
        AssertionError e = assertThrows(AssertionError.class, () -> HistoryChecker.of(h).assertFencesHeld());
        assertTrue(e.getMessage().contains("#1 PUT (after 0 fences) was applied again after #3 PUT (after 1) was, and not as a copy sent again"), e.getMessage());

        History ok = new History();
        Visible honest = new Visible();
        Endpoint ep2 = ok.record(honest);
        ep2.put(ByteBuffer.wrap(new byte[] {1}), 0x1000, key);
        ep2.fence();
        ep2.put(ByteBuffer.wrap(new byte[] {2}), 0x1000, key);
        honest.traces.get(0).visible(0);
        honest.traces.get(0).visible(0); // sent again, applied again: before the fence lets the next go
        honest.traces.get(1).visible(1);
        honest.completeAll();
        assertDoesNotThrow(() -> HistoryChecker.of(ok).assertFencesHeld());
    }

    @Test
    void aFailureThatSaysNotAppliedAboutAnAppliedCallIsCaught() {
        History h = new History();
        Visible s = new Visible();
        Endpoint ep = h.record(s);
        ep.put(ByteBuffer.wrap(new byte[] {1}), 0x1000, key);
        ep.put(ByteBuffer.wrap(new byte[] {2}), 0x1100, key);
        s.traces.get(0).visible(0);
        s.traces.get(1).visible(1);
        s.pending.get(0).completeExceptionally(new dev.fenceline.EndpointFailedException("lost its last lane"));
        s.pending.get(1).completeExceptionally(new dev.fenceline.OutcomeUnknownException("may have been applied"));
        AssertionError e = assertThrows(AssertionError.class, () -> HistoryChecker.of(h).assertOutcomesTruthful());
        assertTrue(e.getMessage().contains("#1 PUT failed with EndpointFailedException (not applied), but the target"
                + " applied it") && e.getMessage().contains("1 violation"), e.getMessage());
    }
}
