package dev.fenceline.actor;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.fenceline.EndpointFailedException;
import dev.fenceline.OutcomeUnknownException;
import dev.fenceline.spi.RecordingLane;
import java.nio.ByteBuffer;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import org.apache.pekko.actor.testkit.typed.javadsl.BehaviorTestKit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import java.util.concurrent.TimeUnit;

/**
 * Tier 2, requests restarted into the fence queue by a lane replacement: they keep their place in
 * the fence order, and are judged again on the lane they finally go out on.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class FenceQueueRestartTest extends EndpointActorFixture {
    /** Where {@link #laneOfAWeakFenceReplacedDuringTheStrongFenceAfterIt} leaves the endpoint. */
    private record QueuedRestart(BehaviorTestKit<EndpointProtocol.Command> kit, RecordingLane l1, RecordingLane l0b,
            CompletableFuture<Void> r, CompletableFuture<Void> b) {
    }

    /**
     * P (epoch 0) and R (epoch 1, let through by a weak fence) on lane 0, B (epoch 2) on lane 1
     * behind a strong fence; then lane 0 is replaced during that fence: P is restarted, R (whose
     * copy on the old connection may still apply) is restarted into the fence queue, below the
     * restarted fence's epoch.
     */
    private QueuedRestart laneOfAWeakFenceReplacedDuringTheStrongFenceAfterIt() {
        RecordingLane l0 = shortLane();
        RecordingLane l1 = bulkLane();
        BehaviorTestKit<EndpointProtocol.Command> kit = spawn("endpoint", l0, l1);
        facade.put(ByteBuffer.allocate(8), key.baseAddress(), key); // P
        facade.fence();
        CompletableFuture<Void> r = facade.put(ByteBuffer.allocate(16), key.baseAddress(), key).toCompletableFuture();
        facade.fence();
        CompletableFuture<Void> b = facade.put(ByteBuffer.allocate(1 << 16), key.baseAddress(), key)
                .toCompletableFuture();
        settle(kit);
        assertEquals(List.of("PUT:8", "fence", "PUT:16", "flush"), l0.events);
        RecordingLane l0b = new RecordingLane(3, l0.types);
        kit.run(new LaneProtocol.LaneReplaced(0, l0.id, l0b));
        settle(kit); // the replay, then the restarted fence
        assertEquals(List.of("PUT:8", "flush"), l0b.events, "P restarted, R queued behind the restarted fence");
        return new QueuedRestart(kit, l1, l0b, r, b);
    }

    /**
     * A request issued after the restarted fence, arriving as the fence completes, must not be
     * posted before R, which waits in the queue: it would overtake work fenced before it.
     */
    @Test
    void aRequestIssuedAfterARestartedFenceWaitsForWorkFencedBeforeItThatStillQueues() {
        QueuedRestart q = laneOfAWeakFenceReplacedDuringTheStrongFenceAfterIt();
        RecordingLane l0b = q.l0b();
        facade.put(ByteBuffer.allocate(24), key.baseAddress(), key); // Y, epoch 2, lane 0: not drained yet
        q.kit().run(new LaneProtocol.LaneFlushed(0, l0b.id, l0b.flushTokens.get(l0b.flushTokens.size() - 1)));
        q.kit().run(new LaneProtocol.LaneFlushed(1, q.l1().id, q.l1().flushTokens.get(q.l1().flushTokens.size() - 1)));
        settle(q.kit());
        assertTrue(l0b.events.contains("PUT:16"), "R was released: " + l0b.events);
        assertTrue(l0b.events.indexOf("PUT:16") < l0b.events.indexOf("PUT:24") || !l0b.events.contains("PUT:24"),
                "Y, fenced after R, went out before it: " + l0b.events);
    }

    /**
     * R was judged against the lane it was to go out on. If that lane is replaced again, by one of
     * another exactly-once scope, before R leaves the queue, it must be judged again: sent there, a
     * late first copy would apply too and nobody would know.
     */
    @Test
    void aRestartedRequestLeavingTheFenceQueueIsJudgedAgainstTheLaneItNowGoesOutOn() {
        QueuedRestart q = laneOfAWeakFenceReplacedDuringTheStrongFenceAfterIt();
        BehaviorTestKit<EndpointProtocol.Command> kit = q.kit();
        RecordingLane l1 = q.l1();
        CompletableFuture<Void> r = q.r();
        CompletableFuture<Void> b = q.b();
        kit.run(new LaneProtocol.OpCompleted(0, q.l0b().id, q.l0b().ops.get(0).token(), 0)); // P is done
        RecordingLane l0c = new RecordingLane(4, q.l0b().types).scope("another window");
        kit.run(new LaneProtocol.LaneReplaced(0, q.l0b().id, l0c));
        settle(kit);
        kit.run(new LaneProtocol.LaneFlushed(0, l0c.id, l0c.flushTokens.get(l0c.flushTokens.size() - 1)));
        kit.run(new LaneProtocol.LaneFlushed(1, l1.id, l1.flushTokens.get(l1.flushTokens.size() - 1)));
        settle(kit);
        assertFalse(l0c.events.contains("PUT:16"), "R went out where its late first copy is not recognized: "
                + l0c.events);
        assertTrue(r.isCompletedExceptionally(), "R ends: " + r);
        assertInstanceOf(OutcomeUnknownException.class, failure(r));
        assertFalse(l1.events.contains("PUT:65536"), "B, fenced after R, went out: " + l1.events);
        assertInstanceOf(EndpointFailedException.class, failure(b), "B was never sent");
        assertFalse(failure(b) instanceof OutcomeUnknownException, "B was never sent: " + failure(b));
        CompletableFuture<Void> later = facade.put(ByteBuffer.allocate(8), key.baseAddress(), key)
                .toCompletableFuture();
        settle(kit);
        assertInstanceOf(EndpointFailedException.class, failure(later),
                "the endpoint ended: the late copy could overtake anything fenced after it");
    }
}
