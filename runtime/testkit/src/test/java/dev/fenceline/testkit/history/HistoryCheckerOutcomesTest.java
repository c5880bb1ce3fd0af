package dev.fenceline.testkit.history;

import static org.junit.jupiter.api.Assertions.assertDoesNotThrow;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.fenceline.AtomicOp;
import dev.fenceline.Endpoint;
import dev.fenceline.EndpointFailedException;
import dev.fenceline.OutcomeUnknownException;
import dev.fenceline.RemoteKey;
import java.nio.ByteBuffer;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * The checker against what the outcomes and the atomics' answers say: a get that reads the bytes of
 * a put refused as not applied, two fetched ADDs that each missed the other's, a copy of a call that
 * lands after a later flush completed, all caught; a get over an ADD's word and words of different
 * widths side by side are not mistaken for violations.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class HistoryCheckerOutcomesTest {
    private final RemoteKey key = new RemoteKey(UUID.randomUUID(), 1, 0x1000, 4096, Map.of());

    @Test
    void aGetThatReadsWhatARefusedPutWroteIsCaught() {
        for (boolean earlierPut : new boolean[] {true, false}) {
            for (RuntimeException refusal : new RuntimeException[] {new EndpointFailedException("lane lost"),
                    new OutcomeUnknownException("may still apply")}) {
                History h = new History();
                ScriptedEndpoint s = new ScriptedEndpoint();
                Endpoint ep = h.record(s);
                if (earlierPut) {
                    ep.put(ByteBuffer.wrap(new byte[] {1}), 0x1000, key);
                    ep.fence();
                }
                ep.put(ByteBuffer.wrap(new byte[] {2}), 0x1000, key);
                ep.fence();
                s.getAnswer = 2; // what the refused put would have written
                ep.get(ByteBuffer.allocate(1), 0x1000, key);
                s.pending.get(earlierPut ? 1 : 0).completeExceptionally(refusal);
                s.completeAll();
                String what = (earlierPut ? "after a put, " : "") + refusal.getClass().getSimpleName();
                if (refusal instanceof OutcomeUnknownException) { // it may have been applied
                    assertDoesNotThrow(() -> HistoryChecker.of(h).assertFencesHeld(), what);
                    continue;
                }
                long refused = earlierPut ? 3 : 1;
                AssertionError e = assertThrows(AssertionError.class, () -> HistoryChecker.of(h).assertFencesHeld(),
                        what);
                assertTrue(e.getMessage().contains("read byte 0x1000 written by put #" + refused
                        + ", which failed as not applied"), what + ": " + e.getMessage());
            }
        }
    }

    @Test
    void twoFetchedAddsThatEachMissedTheOthersAreCaught() {
        History h = new History();
        ScriptedEndpoint s = new ScriptedEndpoint();
        Endpoint ep = h.record(s);
        s.fetchAnswer = 0;
        ep.atomicFetch64(AtomicOp.ADD, 0x1000, key, 1);
        ep.atomicFetch64(AtomicOp.ADD, 0x1000, key, 1); // also 0: one of them missed the other
        AssertionError e = assertThrows(AssertionError.class, () -> HistoryChecker.of(h).assertExactlyOnce(a -> 2));
        assertTrue(e.getMessage().contains("fetches #1 and #2 at 0x1000 saw 0 and 0 added: one of them missed the"
                + " other's ADD of 1"), e.getMessage());

        History beyond = new History(); // a fetch that saw more than the word ever held
        s.fetchAnswer = 5;
        beyond.record(s).atomicFetch64(AtomicOp.ADD, 0x1000, key, 1);
        e = assertThrows(AssertionError.class, () -> HistoryChecker.of(beyond).assertExactlyOnce(a -> 1));
        assertTrue(e.getMessage().contains("fetch #1 at 0x1000 saw 5 added and added 1, but the word ends at 1"),
                e.getMessage());

        // Applied +1 (saw 0), +2 (saw 1), +0 (saw 3), +2 (saw 3), issued in another order: fine.
        History ok = new History();
        Endpoint ep2 = ok.record(s);
        long[][] seenAndOperand = {{3, 0}, {0, 1}, {1, 2}, {3, 2}};
        for (long[] f : seenAndOperand) {
            s.fetchAnswer = 10 + f[0];
            ep2.atomicFetch64(AtomicOp.ADD, 0x1000, key, f[1]);
        }
        assertDoesNotThrow(() -> HistoryChecker.of(ok).initially(0x1000, 10).assertExactlyOnce(a -> 10 + 5));
    }

    @Test
    void aFailedCallAppliedAfterALaterFlushCompletedIsCaught() {
        for (boolean late : new boolean[] {true, false}) {
            History h = new History();
            HistoryCheckerTest.Visible s = new HistoryCheckerTest.Visible();
            Endpoint ep = h.record(s);
            ep.put(ByteBuffer.wrap(new byte[] {1}), 0x1000, key);
            s.pending.get(0).completeExceptionally(new OutcomeUnknownException("its lane failed"));
            if (!late) {
                s.traces.get(0).visible(0); // its copy landed before the flush completed
            }
            ep.flush();
            s.pending.get(1).complete(null);
            ep.put(ByteBuffer.wrap(new byte[] {2}), 0x1000, key);
            s.traces.get(1).visible(1);
            s.completeAll();
            if (late) {
                s.traces.get(0).visible(0); // and now over the put the application made after the flush
                AssertionError e = assertThrows(AssertionError.class,
                        () -> HistoryChecker.of(h).assertFlushesCovered());
                assertTrue(e.getMessage().contains("#1 PUT (failed), issued before flush #2, was applied after the"
                        + " flush completed: a stale copy"), e.getMessage());
            } else {
                assertDoesNotThrow(() -> HistoryChecker.of(h).assertFlushesCovered());
            }
        }
    }

    /** An ADD changes bytes no put wrote: a get over its word reads what the ADD made of a put's bytes. */
    @Test
    void aGetOverAnAddsWordIsNotTakenForAStaleRead() {
        History h = new History();
        ScriptedEndpoint s = new ScriptedEndpoint();
        Endpoint ep = h.record(s);
        ep.put(ByteBuffer.wrap(new byte[] {5, 0, 0, 0, 0, 0, 0, 0}), 0x1000, key);
        ep.fence();
        ep.atomicPost64(AtomicOp.ADD, 0x1000, key, 1);
        ep.fence();
        s.getAnswer = 6;
        ep.get(ByteBuffer.allocate(1), 0x1000, key);
        s.completeAll();
        assertDoesNotThrow(() -> HistoryChecker.of(h).assertFencesHeld().assertProgramOrderObserved());
    }

    /** Atomics of different widths over the same bytes: no word of them is modelled as ADDs only. */
    @Test
    void wordsOfDifferentWidthsOverTheSameBytesAreNotModelled() {
        History h = new History();
        ScriptedEndpoint s = new ScriptedEndpoint();
        Endpoint ep = h.record(s);
        ep.atomicPost64(AtomicOp.ADD, 0x1000, key, 1);
        ep.compareAndSwap32(0x1004, key, 0, 7); // the 64-bit word's upper half (little-endian)
        ep.atomicPost32(AtomicOp.ADD, 0x1008, key, 1);
        ep.atomicPost64(AtomicOp.ADD, 0x1008, key, 1); // the same start, another width
        s.completeAll();
        long[] memory = {(7L << 32) + 1, 2};
        assertDoesNotThrow(() -> HistoryChecker.of(h).assertExactlyOnce(a -> memory[(int) (a - 0x1000) / 8]));

        History beside = new History(); // two widths at x, and a word at x + 4 the 64-bit ADDs reach too
        Endpoint ep3 = beside.record(s);
        ep3.atomicPost64(AtomicOp.ADD, 0x1000, key, 1L << 32);
        ep3.atomicPost32(AtomicOp.ADD, 0x1000, key, 1);
        ep3.atomicPost32(AtomicOp.ADD, 0x1004, key, 1);
        s.completeAll();
        long[] words = {(2L << 32) + 1, 2}; // x as 64 bits, x + 4 as 32 bits
        assertDoesNotThrow(() -> HistoryChecker.of(beside).assertFencesHeld()
                .assertExactlyOnce(a -> a == 0x1000 ? words[0] : words[1]));

        History alone = new History(); // one width, nothing beside it: still modelled
        Endpoint ep2 = alone.record(s);
        ep2.atomicPost64(AtomicOp.ADD, 0x1000, key, 1);
        ep2.atomicPost64(AtomicOp.ADD, 0x1008, key, 1);
        s.completeAll();
        assertThrows(AssertionError.class, () -> HistoryChecker.of(alone).assertExactlyOnce(a -> 2));
    }
}
