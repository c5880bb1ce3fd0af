package dev.fenceline.actor;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.fenceline.EndpointFailedException;
import dev.fenceline.LaneType;
import dev.fenceline.OutcomeUnknownException;
import dev.fenceline.RemoteAccessException;
import dev.fenceline.spi.RecordingLane;
import java.nio.ByteBuffer;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import org.apache.pekko.actor.testkit.typed.javadsl.BehaviorTestKit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import java.util.concurrent.TimeUnit;

/**
 * Tier 2, the truth of outcomes: a request, or a flush, that may have been applied (a fragment was,
 * or a copy on a connection the endpoint gave up may have been, or may still be) ends as
 * {@link OutcomeUnknownException}, never with an error that says it was not applied.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class EndpointOutcomesTest extends EndpointActorFixture {
    /**
     * A put of four fragments: the first applied, the other three refused by the target as not
     * applied (its peer refused, say). The put was partly applied: it fails as unknown, never with
     * the refusals' "not applied".
     */
    @Test
    void aPutWithAFragmentAppliedAndTheRestRefusedFailsAsUnknown() {
        RecordingLane l0 = shortLane();
        RecordingLane l1 = bulkLane();
        BehaviorTestKit<EndpointProtocol.Command> kit = spawn("endpoint", l0, l1);
        CompletableFuture<Void> big = facade.put(ByteBuffer.allocate(4 << 16), key.baseAddress(), key)
                .toCompletableFuture();
        settle(kit);
        assertEquals(4, l1.ops.size(), "four 64 KiB fragments");
        kit.run(new LaneProtocol.OpCompleted(1, l1.id, l1.ops.get(0).token(), 0));
        refuse(kit, l1, 1, 4);
        Throwable partly = failure(big);
        assertInstanceOf(OutcomeUnknownException.class, partly);
        assertTrue(partly.getMessage().contains("was partly applied"), partly.getMessage());

        CompletableFuture<Void> whole = facade.put(ByteBuffer.allocate(4 << 16), key.baseAddress(), key)
                .toCompletableFuture(); // none of its fragments applied: the refusal stands
        settle(kit);
        refuse(kit, l1, 4, 8);
        assertInstanceOf(EndpointFailedException.class, failure(whole));

        CompletableFuture<Void> mixed = facade.put(ByteBuffer.allocate(2 << 16), key.baseAddress(), key)
                .toCompletableFuture(); // one fragment refused first, the other's outcome unknown after
        settle(kit);
        refuse(kit, l1, 8, 9);
        kit.run(new LaneProtocol.OpFailed(1, l1.id, l1.ops.get(9).token(),
                new OutcomeUnknownException("the copy may have landed")));
        settle(kit);
        assertInstanceOf(OutcomeUnknownException.class, failure(mixed),
                "an unknown fragment makes the request's outcome unknown, whichever error came first");
    }

    /** The target refuses lane 1's operations {@code from} to {@code to} (exclusive) as not applied. */
    private static void refuse(BehaviorTestKit<EndpointProtocol.Command> kit, RecordingLane l1, int from, int to) {
        for (int i = from; i < to; i++) {
            kit.run(new LaneProtocol.OpFailed(1, l1.id, l1.ops.get(i).token(),
                    new EndpointFailedException("refused, not applied")));
        }
        settle(kit);
    }

    /**
     * A put whose first copy may have been applied (its lane stopped it, its answer lost) is sent
     * again on a lane of another exactly-once scope (puts are idempotent), and the target refuses
     * that copy. The refusal says nothing of the first copy: the put's outcome is unknown, not
     * "not applied".
     */
    @Test
    void aRefusedCopyOfAPutWhoseFirstCopyMayHaveAppliedIsAnUnknownOutcome() {
        RecordingLane l0 = shortLane().scope("A").revocation(dev.fenceline.spi.Revocation.STOPPED);
        RecordingLane l2 = new RecordingLane(5, Set.of(LaneType.AM, LaneType.RMA, LaneType.AMO)).scope("B");
        BehaviorTestKit<EndpointProtocol.Command> kit = spawn("endpoint", l0, l2);
        CompletableFuture<Void> put = facade.put(ByteBuffer.allocate(8), key.baseAddress(), key).toCompletableFuture();
        settle(kit);
        assertEquals(List.of("PUT:8"), l0.events);
        kit.run(new LaneProtocol.LaneFailed(0, l0.id, new RuntimeException("link down")));
        settle(kit);
        assertEquals(List.of("PUT:8"), l2.events, "sent again on the other lane");
        kit.run(new LaneProtocol.OpFailed(1, l2.id, l2.ops.get(0).token(),
                new RemoteAccessException(RemoteAccessException.Reason.REGION_CLOSED, "region 002a closed")));
        Throwable e = failure(put);
        assertInstanceOf(OutcomeUnknownException.class, e, "the first copy may have been applied: " + e);
        assertInstanceOf(RemoteAccessException.class, e.getCause(), "the target's refusal is kept as the cause");
    }

    /**
     * The endpoint ends while a flush waits and an implicit put before it is in flight, a copy of
     * which may still apply: the flush reports that put's unknown outcome, not the end alone (which
     * would say that nothing before it was applied), since no later flush can report it.
     */
    @Test
    void aFlushPendingWhenTheEndpointEndsReportsAnImplicitOperationThatMayHaveApplied() {
        RecordingLane l0 = shortLane();
        BehaviorTestKit<EndpointProtocol.Command> kit = spawn("endpoint", "peer", l0);
        facade.putImplicit(ByteBuffer.allocate(8), key.baseAddress(), key);
        CompletableFuture<Void> flush = facade.flush().toCompletableFuture();
        settle(kit);
        assertEquals(List.of("PUT:8", "flush"), l0.events);
        kit.run(new LaneProtocol.LaneFailed(0, l0.id, new RuntimeException("link down")));
        settle(kit);
        Throwable e = failure(flush);
        assertInstanceOf(OutcomeUnknownException.class, e, "the put may still apply: " + e);
    }

    /** The same for a flush the actor had not taken yet when the endpoint ended, and one issued after. */
    @Test
    void aFlushNotYetTakenOrIssuedAfterTheEndReportsAnImplicitOperationThatMayHaveApplied() {
        RecordingLane l0 = shortLane();
        BehaviorTestKit<EndpointProtocol.Command> kit = spawn("endpoint", "peer", l0);
        facade.putImplicit(ByteBuffer.allocate(8), key.baseAddress(), key);
        settle(kit);
        CompletableFuture<Void> waiting = facade.flush().toCompletableFuture(); // not taken yet
        kit.run(new LaneProtocol.LaneFailed(0, l0.id, new RuntimeException("link down")));
        settle(kit);
        assertInstanceOf(OutcomeUnknownException.class, failure(waiting), "the put may still apply");
        org.junit.jupiter.api.Assertions.assertThrows(EndpointFailedException.class,
                () -> facade.putImplicit(ByteBuffer.allocate(8), key.baseAddress(), key), "the endpoint ended");
        Throwable after = failure(facade.flush().toCompletableFuture());
        assertInstanceOf(EndpointFailedException.class, after, "each flush reports one error: " + after);
        assertFalse(after instanceof OutcomeUnknownException, String.valueOf(after));
    }

    /**
     * A flush refused on the caller's thread (the endpoint is closing) takes no error from one the
     * actor holds: that one still reports the implicit operation before it that failed.
     */
    @Test
    void aFlushRefusedWhileClosingLeavesTheErrorsToTheFlushTheActorHolds() {
        RecordingLane l0 = shortLane();
        BehaviorTestKit<EndpointProtocol.Command> kit = spawn("endpoint", l0);
        facade.putImplicit(ByteBuffer.allocate(8), key.baseAddress(), key);
        CompletableFuture<Void> f1 = facade.flush().toCompletableFuture();
        settle(kit);
        kit.run(new LaneProtocol.OpFailed(0, l0.id, l0.ops.get(0).token(),
                new RemoteAccessException(RemoteAccessException.Reason.UNKNOWN_KEY, "key 002a.. unknown")));
        channel.markClosing(); // as close() does first
        assertTrue(facade.flush().toCompletableFuture().isCompletedExceptionally(), "refused: closing");
        kit.run(new LaneProtocol.LaneFlushed(0, l0.id, l0.flushTokens.get(l0.flushTokens.size() - 1)));
        settle(kit);
        assertInstanceOf(RemoteAccessException.class, failure(f1), "the put's failure, reported by its flush");
    }

    @Test
    void aFlushIssuedAfterTheEndReportsAnImplicitOperationThatMayHaveApplied() {
        RecordingLane l0 = shortLane();
        BehaviorTestKit<EndpointProtocol.Command> kit = spawn("endpoint", "peer", l0);
        facade.putImplicit(ByteBuffer.allocate(8), key.baseAddress(), key);
        settle(kit);
        kit.run(new LaneProtocol.LaneFailed(0, l0.id, new RuntimeException("link down")));
        settle(kit);
        Throwable e = failure(facade.flush().toCompletableFuture());
        assertInstanceOf(OutcomeUnknownException.class, e, "the put may still apply: " + e);
    }
}
