package dev.fenceline.spi.support;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.fenceline.FencelineException;
import dev.fenceline.OutcomeUnknownException;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import java.util.concurrent.TimeUnit;

/** The one target-side exactly-once apply that tcp, shm and sim share. */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class ExactlyOnceTest {
    private final ExactlyOnce once = new ExactlyOnce("test worker 'b'", 16);
    private final DedupWindow window = once.newWindow();
    private final AtomicInteger applied = new AtomicInteger();

    private long add() {
        return applied.getAndIncrement();
    }

    @Test
    void aReSentCopyGetsTheFirstCopysResultAndIsNotAppliedAgain() {
        assertEquals(0, once.apply(window, 7, 3, 0, this::add));
        assertEquals(0, once.apply(window, 7, 3, 0, this::add), "the first result");
        assertEquals(1, applied.get(), "applied once");
        assertEquals(1, once.apply(window, 7, 4, 0, this::add), "the next operation is new");
    }

    @Test
    void aRefusedOperationIsRefusedAgainWithTheSameError() {
        FencelineException refusal = new FencelineException("no such key");
        ExactlyOnce.Operation refuse = () -> {
            applied.incrementAndGet();
            throw refusal;
        };
        assertSame(refusal, assertThrows(FencelineException.class, () -> once.apply(window, 7, 0, 0, refuse)));
        assertSame(refusal, assertThrows(FencelineException.class, () -> once.apply(window, 7, 0, 0, this::add)));
        assertEquals(1, applied.get());
    }

    @Test
    void staleCopiesAndCopiesBeyondTheWindowAreNeverApplied() {
        OutcomeUnknownException stale = assertThrows(OutcomeUnknownException.class,
                () -> once.apply(window, 0xabc, 2, 5, this::add));
        assertTrue(stale.getMessage().contains("test worker 'b'") && stale.getMessage().contains("stale copy of"
                + " operation 2 of endpoint abc"), stale.getMessage());
        FencelineException full = assertThrows(FencelineException.class,
                () -> once.apply(window, 0xabc, 5 + 16, 5, this::add));
        assertTrue(full.getMessage().contains("fenceline.exactly-once.window = 16"), full.getMessage());
        assertEquals(0, applied.get());
    }

    /**
     * An operation applied asynchronously: begin marks it running, a copy meanwhile is refused as
     * outcome-unknown (never run twice), and after finish a copy gets the first one's outcome.
     */
    @Test
    void anAsynchronousOperationRunsOnceAndItsCopiesWaitForNothing() {
        assertTrue(once.begin(window, 0xabc, 0, 0), "new: run it");
        OutcomeUnknownException meanwhile = assertThrows(OutcomeUnknownException.class,
                () -> once.begin(window, 0xabc, 0, 0));
        assertTrue(meanwhile.getMessage().contains("being applied now"), meanwhile.getMessage());
        assertThrows(OutcomeUnknownException.class, () -> once.apply(window, 0xabc, 0, 0, this::add),
                "a synchronous copy is refused the same way");
        once.finish(window, 0, 42, null);
        assertFalse(once.begin(window, 0xabc, 0, 0), "applied before: answer from the window");
        assertEquals(42, window.result(0));
        assertTrue(once.begin(window, 0xabc, 1, 0));
        FencelineException refused = new FencelineException("handler threw");
        once.finish(window, 1, 0, refused);
        assertSame(refused, assertThrows(FencelineException.class, () -> once.begin(window, 0xabc, 1, 0)));
        assertTrue(once.begin(window, 0xabc, 2, 0));
        assertThrows(OutcomeUnknownException.class, () -> once.begin(window, 0xabc, 1, 3), "stale");
        once.finish(window, 2, 7, null); // its origin gave up on it meanwhile: nothing to record, no error
        assertEquals(0, applied.get());
    }

    @Test
    void anOperationWithoutASequenceNumberIsSimplyApplied() {
        once.apply(window, 7, -1, -1, this::add);
        once.apply(window, 7, -1, -1, this::add);
        once.apply(null, 7, 9, 0, this::add);
        assertEquals(3, applied.get());
    }

    /**
     * A handler that takes long holds no lock while it runs: a copy arriving meanwhile on another
     * thread is answered at once, with OutcomeUnknownException, and one arriving after it finished
     * gets its result; it ran once.
     */
    @Test
    void aCopyArrivingWhileTheFirstRunsOutsideTheLockIsRefusedAtOnce() throws Exception {
        java.util.concurrent.CountDownLatch running = new java.util.concurrent.CountDownLatch(1);
        java.util.concurrent.CountDownLatch release = new java.util.concurrent.CountDownLatch(1);
        java.util.concurrent.ExecutorService first = java.util.concurrent.Executors.newSingleThreadExecutor();
        try {
            java.util.concurrent.Future<Long> slow = first.submit(() -> once.applyOutsideLock(window, 7, 3, 0, () -> {
                running.countDown();
                try {
                    assertTrue(release.await(30, TimeUnit.SECONDS), "the test let the handler finish");
                } catch (InterruptedException e) {
                    throw new IllegalStateException(e);
                }
                return 41 + add();
            }));
            assertTrue(running.await(30, TimeUnit.SECONDS), "the first copy runs");
            assertThrows(OutcomeUnknownException.class, () -> once.applyOutsideLock(window, 7, 3, 0, this::add),
                    "a copy while the first runs");
            release.countDown();
            assertEquals(41, slow.get(30, TimeUnit.SECONDS));
            assertEquals(41, once.applyOutsideLock(window, 7, 3, 0, this::add), "a copy after: the first's result");
            assertEquals(1, applied.get(), "run once");
        } finally {
            release.countDown();
            first.shutdownNow();
        }
    }

    @Test
    void anOperationThatThrowsUnexpectedlyOutsideTheLockIsNotRunAgainByACopy() {
        ExactlyOnce.Operation broken = () -> {
            applied.incrementAndGet();
            throw new IllegalStateException("a bug in a handler");
        };
        assertThrows(IllegalStateException.class, () -> once.applyOutsideLock(window, 7, 5, 0, broken));
        assertThrows(OutcomeUnknownException.class, () -> once.applyOutsideLock(window, 7, 5, 0, broken));
        assertEquals(1, applied.get());
    }

    /**
     * A copy that can wait (tcp) is told its first copy runs instead of being refused, waits for its
     * outcome, and is then answered from the window; a waiter runs once, also when the origin gave
     * the operation up meanwhile (then the copy is stale), and waiters of other operations stay.
     */
    @Test
    void aCopyThatCanWaitIsAnsweredWithTheFirstCopysOutcome() {
        assertEquals(ExactlyOnce.Start.RUN, once.beginOutsideOrWait(window, 0xabc, 0, 0));
        assertEquals(ExactlyOnce.Start.FIRST_COPY_RUNNING, once.beginOutsideOrWait(window, 0xabc, 0, 0));
        AtomicInteger woken = new AtomicInteger();
        window.whenFinished(0, woken::incrementAndGet);
        assertEquals(ExactlyOnce.Start.RUN, once.beginOutsideOrWait(window, 0xabc, 1, 0));
        AtomicInteger otherWoken = new AtomicInteger();
        window.whenFinished(1, otherWoken::incrementAndGet);
        assertTrue(window.running());
        once.finishOutside(window, 0, 42, null);
        assertEquals(1, woken.get(), "woken when the first copy's outcome is recorded");
        assertEquals(0, otherWoken.get(), "not the other operation's");
        assertEquals(1, window.waiting());
        assertEquals(ExactlyOnce.Start.APPLIED_BEFORE, once.beginOutsideOrWait(window, 0xabc, 0, 0));
        assertEquals(42, window.result(0));
        once.finish(window, 0, 42, null);
        assertEquals(1, woken.get(), "a waiter runs once");

        assertEquals(DedupWindow.Seen.NEW, window.lookup(2, 2), "a later operation says 0 and 1 completed");
        once.finishOutside(window, 1, 0, null); // given up meanwhile: nothing recorded, the waiter still runs
        assertEquals(1, otherWoken.get());
        assertEquals(0, window.waiting());
        assertFalse(window.running());
        assertThrows(OutcomeUnknownException.class, () -> once.beginOutsideOrWait(window, 0xabc, 1, 0),
                "the waiting copy, deciding again, is stale");
    }
}
