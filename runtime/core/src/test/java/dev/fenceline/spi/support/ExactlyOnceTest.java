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
}
