package dev.fenceline.actor;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.fenceline.Access;
import dev.fenceline.AtomicOp;
import dev.fenceline.EndpointClosedException;
import dev.fenceline.FencelineException;
import dev.fenceline.RemoteAccessException;
import dev.fenceline.RemoteKey;
import java.nio.ByteBuffer;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import java.util.concurrent.TimeUnit;

/** The parts an endpoint's facade and actor share, each without the other. */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class ChannelPartsTest {
    private final ComponentFixture f = new ComponentFixture();
    private final AtomicInteger wakeups = new AtomicInteger();

    ChannelPartsTest() {
        f.channel.submissions().wakeup(wakeups::incrementAndGet);
    }

    @Test
    void aBurstOfSubmissionsCostsOneWakeUpAndAnEndedEndpointFailsLateOnes() {
        SubmissionQueue q = f.channel.submissions();
        for (int i = 0; i < 5; i++) {
            q.submit(f.put(8, 0));
        }
        assertEquals(1, wakeups.get(), "one drain message for the burst");
        q.drainStarted();
        int taken = 0;
        while (q.poll() != null) {
            taken++;
        }
        assertEquals(5, taken);
        assertEquals(5, q.polled());
        q.submit(f.put(8, 0));
        assertEquals(2, wakeups.get(), "the next burst after the drain started");
        EndpointClosedException end = new EndpointClosedException("closed");
        f.channel.terminate(end);
        Request late = f.put(8, 0);
        q.submit(late);
        assertTrue(late.future().isCompletedExceptionally(), "failed by its submitter");
    }

    @Test
    void aGrantIsVoidOnceAnythingIsSubmittedAndNotPublishedOverUntakenWork() {
        GrantSlot g = f.channel.grant();
        g.publish(null, null, 0, false);
        assertNotNull(g.valid());
        f.channel.submit(f.put(8, 0));
        assertNull(g.valid(), "stamped before the submission");
        g.publish(null, null, 0, false);
        assertNull(g.valid(), "a submission the actor has not taken");
        f.channel.submissions().drainStarted();
        f.channel.submissions().poll();
        g.publish(null, null, 0, true);
        assertTrue(g.valid().activeMessages());
        g.revoke();
        assertNull(g.valid());
    }

    @Test
    void aDirectFlushWaitsForTheAnswersSentBeforeItAndReportsTheirFailure() throws Exception {
        DirectLedger d = f.channel.direct();
        long first = d.answers.queued();
        long second = d.answers.queued();
        assertEquals(2, d.sent());
        CompletableFuture<Void> flush = d.flush(d.sent(), 1);
        assertFalse(d.settled());
        d.answers.answered(first, null);
        assertFalse(flush.isDone(), "one of two answers");
        FencelineException handler = new FencelineException("handler threw");
        d.answers.answered(second, handler);
        assertSame(handler, org.junit.jupiter.api.Assertions.assertThrows(ExecutionException.class, flush::get)
                .getCause());
        assertTrue(d.settled());
        assertEquals(2, d.heard());
        assertEquals(1, d.failures());
        assertNull(d.flushError(1, d.sent()), "taken by that flush");
    }

    /**
     * Statistics read while answers come: completed and failed never go down between two reads
     * (a monitoring system takes a counter that goes down for a reset). Which answers fail follows
     * a printed seed.
     */
    @Test
    void completedAndFailedNeverGoDownWhileDirectAnswersCome() throws Exception {
        long seed = Long.getLong("fenceline.test.seed", 20261204L);
        System.out.println("ChannelPartsTest seed " + seed);
        java.util.SplittableRandom random = new java.util.SplittableRandom(seed);
        DirectLedger d = f.channel.direct();
        int n = 200_000;
        boolean[] fails = new boolean[n];
        for (int i = 0; i < n; i++) {
            fails[i] = random.nextInt(3) == 0;
            d.answers.queued();
        }
        FencelineException refused = new FencelineException("handler threw");
        java.util.concurrent.atomic.AtomicBoolean done = new java.util.concurrent.atomic.AtomicBoolean();
        Thread answering = new Thread(() -> {
            for (int i = 0; i < n; i++) {
                if (i % 1000 == 999) {
                    d.answers.abandoned(1, refused);
                } else {
                    d.answers.answered(i, fails[i] ? refused : null);
                }
                if (i % 4096 == 0) {
                    f.channel.flushError(i, i); // the flush that takes the errors, now and then
                }
            }
            done.set(true);
        }, "answering");
        answering.start();
        long completed = 0;
        long failed = 0;
        long reads = 0;
        try {
            while (!done.get()) {
                Totals t = new Totals();
                t.add(f.channel);
                assertTrue(t.completed() >= completed, "completed went from " + completed + " to " + t.completed());
                assertTrue(t.failed() >= failed, "failed went from " + failed + " to " + t.failed());
                completed = t.completed();
                failed = t.failed();
                reads++;
            }
        } finally {
            answering.join();
        }
        Totals end = new Totals();
        end.add(f.channel);
        assertEquals(n, end.completed() + end.failed(), "every answer counted once");
        assertEquals(0, end.outstanding());
        assertTrue(reads > 0);
    }

    /**
     * The endpoint ends while a direct flush waits for an answer: that message is in the peer's
     * queue and its handler may still run, so the flush's outcome is unknown, not "failed" (which
     * would say no message before it was delivered).
     */
    @Test
    void aDirectFlushWaitingForAnAnswerWhenTheEndpointEndsIsAnUnknownOutcome() {
        DirectLedger d = f.channel.direct();
        long first = d.answers.queued();
        CompletableFuture<Void> answeredBefore = d.flush(1, 1);
        d.answers.queued();
        CompletableFuture<Void> waiting = d.flush(2, 1);
        d.answers.answered(first, null);
        assertTrue(answeredBefore.isDone() && !answeredBefore.isCompletedExceptionally());
        EndpointClosedException end = new EndpointClosedException("closed");
        f.channel.terminate(end);
        Throwable e = org.junit.jupiter.api.Assertions.assertThrows(ExecutionException.class, waiting::get).getCause();
        assertInstanceOf(dev.fenceline.OutcomeUnknownException.class, e, "its message may be delivered: " + e);
        assertSame(end, e.getCause());
    }

    @Test
    void abandonedMessagesGoToTheNextFlushAndAWaitingActorIsWoken() {
        DirectLedger d = f.channel.direct();
        d.answers.queued();
        assertFalse(d.answeredOrWake(1));
        int before = wakeups.get();
        FencelineException lost = new FencelineException("lane died");
        d.answers.abandoned(1, lost);
        assertEquals(before + 1, wakeups.get(), "the answer the actor waited for wakes it");
        assertTrue(d.answeredOrWake(1));
        assertEquals(0, d.heard(), "an abandoned message is no evidence the lane lives");
        assertSame(lost, f.channel.flushError(1, 1));
        f.channel.terminate(new EndpointClosedException("closed"));
        d.answers.queued();
        assertTrue(d.flush(2, 2).isCompletedExceptionally(), "a flush after the end fails");
    }

    @Test
    void originChecksNameWhatIsWrong() {
        RemoteKey key = f.key;
        assertNull(OriginChecks.access(f.channel, key.baseAddress(), key, 8, 8, Access.WRITE));
        assertEquals(RemoteAccessException.Reason.UNKNOWN_KEY, reason(OriginChecks.access(f.channel, 0, null, 8, 1, Access.WRITE)));
        RemoteKey foreign = new RemoteKey(UUID.randomUUID(), 1, 0x1000, 64, java.util.Map.of());
        assertEquals(RemoteAccessException.Reason.WRONG_PEER,
                reason(OriginChecks.access(f.channel, 0x1000, foreign, 8, 1, Access.WRITE)));
        assertEquals(RemoteAccessException.Reason.OUT_OF_BOUNDS,
                reason(OriginChecks.access(f.channel, key.baseAddress() - 1, key, 8, 1, Access.WRITE)));
        assertEquals(RemoteAccessException.Reason.MISALIGNED,
                reason(OriginChecks.access(f.channel, key.baseAddress() + 4, key, 8, 8, Access.WRITE)));
        RemoteKey readOnly = new RemoteKey(key.ownerId(), key.keyId(), key.baseAddress(), key.length(),
                java.util.EnumSet.of(Access.READ), java.util.Map.of());
        assertNull(OriginChecks.access(f.channel, key.baseAddress(), readOnly, 8, 1, Access.READ));
        FencelineException denied = OriginChecks.access(f.channel, key.baseAddress(), readOnly, 8, 1,
                Access.WRITE);
        assertEquals(RemoteAccessException.Reason.ACCESS_DENIED, reason(denied));
        assertTrue(denied.getMessage().contains("registered for [READ], not WRITE"), denied.getMessage());
        assertEquals(RemoteAccessException.Reason.ACCESS_DENIED, reason(OriginChecks.access(f.channel,
                key.baseAddress(), readOnly, 8, 8, Access.ATOMIC)));
        assertEquals(RemoteAccessException.Reason.INVALID_OPERATION, reason(OriginChecks.postable(AtomicOp.SWAP, 8)));
        assertNull(OriginChecks.postable(AtomicOp.ADD, 4));
        assertEquals(RemoteAccessException.Reason.INVALID_OPERATION,
                reason(OriginChecks.writable(ByteBuffer.allocate(1).asReadOnlyBuffer())));
        f.channel.markClosing();
        assertInstanceOf(EndpointClosedException.class, OriginChecks.access(f.channel, key.baseAddress(), key, 8, 8, Access.WRITE));
    }

    @Test
    void aFailedEndpointClosedSinceStillSaysWhyItFailed() {
        dev.fenceline.EndpointFailedException why = new dev.fenceline.EndpointFailedException("its member was downed");
        f.channel.publishFailure(why);
        f.channel.markClosing(); // a failed endpoint its owner (or the cluster module) closed
        assertSame(why, OriginChecks.open(f.channel), "the failure, not 'closed'");
        assertSame(why, OriginChecks.access(f.channel, f.key.baseAddress(), f.key, 8, 8, Access.WRITE));
    }

    private static RemoteAccessException.Reason reason(FencelineException e) {
        return assertInstanceOf(RemoteAccessException.class, e).reason();
    }
}
