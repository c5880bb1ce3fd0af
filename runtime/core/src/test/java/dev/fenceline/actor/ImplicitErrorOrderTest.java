package dev.fenceline.actor;

import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;

import dev.fenceline.EndpointFailedException;
import dev.fenceline.FencelineException;
import dev.fenceline.OutcomeUnknownException;
import dev.fenceline.WorkerAddress;
import java.util.Map;
import java.util.UUID;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import java.util.concurrent.TimeUnit;

/**
 * An implicit operation's error goes to the first flush submitted after it, not to a flush that
 * was submitted before it and merely completed later.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class ImplicitErrorOrderTest {
    @Test
    void aFlushReportsOnlyErrorsOfOperationsSubmittedBeforeIt() {
        EndpointChannel c = new EndpointChannel("test", new WorkerAddress(UUID.randomUUID(), "peer", Map.of()));
        FencelineException early = new FencelineException("op 5 failed");
        FencelineException late = new FencelineException("op 9 failed");
        c.implicit().failed(late, 9); // completes first, but was submitted after the flush numbered 7
        c.implicit().failed(early, 5);
        assertSame(early, c.implicit().take(7), "the flush numbered 7 reports op 5");
        assertNull(c.implicit().take(7), "and only once");
        assertSame(late, c.implicit().take(10), "op 9 goes to the next flush");
        assertNull(c.implicit().take(100));
        c.implicit().failed(early, 3);
        c.implicit().failed(late, 4);
        assertSame(early, c.implicit().take(6), "the first error is reported");
        assertNull(c.implicit().take(6), "the others before the same flush are consumed with it");
    }

    /**
     * A lane reports messages withdrawn before the peer took them (not run) and then ones the peer took
     * (each may have run), both under one number: the flush must not say that none may have run.
     */
    @Test
    void anOutcomeUnknownIsNeverHiddenBehindAPlainFailure() {
        EndpointChannel c = new EndpointChannel("test", new WorkerAddress(UUID.randomUUID(), "peer", Map.of()));
        EndpointFailedException notRun = new EndpointFailedException("2 messages withdrawn: not run");
        OutcomeUnknownException mayHaveRun = new OutcomeUnknownException("1 message taken: may have run");
        c.implicit().failed(notRun, 0);
        c.implicit().failed(mayHaveRun, 0);
        assertSame(mayHaveRun, c.implicit().take(1));
        c.implicit().failed(notRun, 3);
        c.implicit().failed(mayHaveRun, 5);
        assertSame(mayHaveRun, c.implicit().take(8), "before the same flush, the unknown one is reported");
        assertNull(c.implicit().take(8));
        c.implicit().failed(mayHaveRun, 9);
        c.implicit().failed(notRun, 9);
        assertSame(mayHaveRun, c.implicit().take(10), "whichever came first");
    }
}
