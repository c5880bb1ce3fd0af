package dev.fenceline.actor;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.typesafe.config.ConfigFactory;
import dev.fenceline.EndpointFailedException;
import dev.fenceline.internal.FencelineSettings;
import dev.fenceline.internal.Keepalive;
import dev.fenceline.spi.PostStatus;
import dev.fenceline.spi.RecordingLane;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.slf4j.LoggerFactory;

/** Lane-table changes and keepalive without an actor, on a clock the test moves. */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class LaneChangesTest {
    private static final long MS = 1_000_000L;
    private final ComponentFixture f = new ComponentFixture();
    private final FencelineSettings settings = FencelineSettings.fromConfig(ConfigFactory.parseString(
            "fenceline.endpoint.keepalive { interval = 20ms, timeout = 100ms }")
            .withFallback(ConfigFactory.defaultReference()).resolve());
    private final AtomicLong now = new AtomicLong(1_000 * MS);
    private final Keepalive keepalive = new Keepalive(20 * MS, 100 * MS);
    private final List<String> told = new ArrayList<>();
    private final Operations ops = new Operations(settings, f.channel, LoggerFactory.getLogger(LaneChangesTest.class),
            keepalive, now::get, () -> told.add("fenceDone"), () -> told.add("drain"));
    private final LaneChanges lanes = new LaneChanges(settings, f.channel, LoggerFactory.getLogger(
            LaneChangesTest.class), ops, keepalive, now::get, (slot, c) -> { }, () -> told.add("replayDone"));

    /**
     * An atomic whose first copy may have been applied (lane a failed under it) is re-sent on lane b,
     * of a's exactly-once scope; lane c, of another scope, is added; b then fails too, having
     * withdrawn that copy. The first copy's risk stays with the request: c would apply it a second
     * time, so it fails as unknown rather than go there.
     */
    @Test
    void aCopyThatMayHaveAppliedIsRememberedWhenALaterOneIsWithdrawn() {
        RecordingLane a = ComponentFixture.shortLane(1).revocation(t -> dev.fenceline.spi.Revocation.Fate.STOPPED);
        RecordingLane b = ComponentFixture.shortLane(2).revocation(dev.fenceline.spi.Revocation.REVOKED);
        lanes.installFirst(List.of(a, b));
        Request x = Request.atomic(Request.Kind.ATOMIC_POST, 0, f.key.baseAddress(), f.key, dev.fenceline.AtomicOp.ADD,
                8, 1, 0);
        ops.accept(x);
        assertEquals(1, a.ops.size(), "the atomic went to lane a: " + a.ops + " " + b.ops);
        assertNull(lanes.laneFailed(0, a.id, new RuntimeException("a down")));
        ops.replayDone(); // as the actor does when the replay's message comes
        ops.drainFenceQueue();
        assertEquals(1, b.ops.size(), "re-sent on the lane of a's scope");
        RecordingLane c = ComponentFixture.shortLane(3).scope("other");
        lanes.added(new LaneProtocol.LaneAdded(c));
        assertNull(lanes.laneFailed(1, b.id, new RuntimeException("b down"))); // b withdrew its copy
        ops.replayDone();
        ops.drainFenceQueue();
        assertEquals(List.of(), c.ops, "a's copy may have been applied in scope 'recording'");
        assertTrue(x.isDone());
        org.junit.jupiter.api.Assertions.assertInstanceOf(dev.fenceline.OutcomeUnknownException.class,
                org.junit.jupiter.api.Assertions.assertThrows(java.util.concurrent.ExecutionException.class,
                        () -> x.future().get()).getCause());
    }

    @Test
    void aLaneWhoseProbeIsAnsweredAtOnceStaysLiveWhileIdle() {
        RecordingLane ring = ComponentFixture.shortLane(1);
        RecordingLane bulk = ComponentFixture.bulkLane(2);
        bulk.flushAnswer = PostStatus.COMPLETED; // as a lane that checks its peer's process itself
        lanes.installFirst(List.of(ring, bulk));
        for (int t = 0; t < 50; t++) {
            now.addAndGet(20 * MS);
            Keepalive.Tick tick = lanes.keepaliveTick();
            assertEquals(-1, tick.failed(), "tick " + t + ": " + f.channel.lanes());
            if (!ring.flushTokens.isEmpty()) { // the ring lane's probe is answered by a message
                ops.flushed(ring.flushTokens.remove(0));
            }
        }
        assertTrue(f.channel.lanes().stream().allMatch(l -> l.live()), f.channel.lanes().toString());
        assertTrue(bulk.events.size() > 10, "the bulk lane was probed: " + bulk.events);
    }

    @Test
    void aLaneWhoseTransportWatchesItsPeerIsNeverProbedAndAnEndpointOfOnlySuchLanesIsNotTicked() {
        RecordingLane watched = ComponentFixture.shortLane(1);
        watched.watched = true; // as shm's lanes: the transport fails them when the peer stops
        RecordingLane probed = ComponentFixture.shortLane(2);
        lanes.installFirst(List.of(watched, probed));
        assertTrue(f.channel.keepaliveWanted(), "a probed lane lives: the worker ticks the endpoint");
        for (int t = 0; t < 3; t++) {
            now.addAndGet(20 * MS);
            assertEquals(-1, lanes.keepaliveTick().failed());
            ops.flushed(probed.flushTokens.remove(0)); // the probed lane answers each probe
        }
        now.addAndGet(200 * MS); // twice the timeout: the watched lane never answered anything
        assertEquals(-1, lanes.keepaliveTick().failed(), "the watched lane is not keepalive's to fail");
        assertEquals(List.of(), watched.flushTokens, "and it got no probe");
        now.addAndGet(120 * MS);
        assertEquals(1, lanes.keepaliveTick().failed(), "the probed lane, unanswered, is");
        assertNull(lanes.laneFailed(1, probed.id, new RuntimeException("keepalive")));
        assertEquals(List.of(true, false), f.channel.lanes().stream().map(l -> l.live()).toList());
        assertTrue(!f.channel.keepaliveWanted(), "only a watched lane is left: the endpoint is not ticked");
    }

    @Test
    void aProbeThatNeverComesBackFailsItsLaneAfterTheTimeout() {
        RecordingLane a = ComponentFixture.shortLane(1);
        RecordingLane b = ComponentFixture.shortLane(2);
        lanes.installFirst(List.of(a, b));
        now.addAndGet(20 * MS);
        lanes.keepaliveTick(); // both probed
        ops.flushed(a.flushTokens.get(0));
        now.addAndGet(50 * MS);
        assertEquals(-1, lanes.keepaliveTick().failed(), "not yet");
        now.addAndGet(60 * MS);
        assertEquals(1, lanes.keepaliveTick().failed(), "lane 1's probe is overdue");
        assertNull(lanes.laneFailed(1, b.id, new RuntimeException("keepalive")), "failover: the endpoint goes on");
        assertEquals(List.of(true, false), f.channel.lanes().stream().map(l -> l.live()).toList());
        assertTrue(told.contains("replayDone"));
        EndpointFailedException last = lanes.laneFailed(0, a.id, new RuntimeException("gone"));
        assertTrue(last != null && last.getMessage().contains("its last live lane"), String.valueOf(last));
    }
}
