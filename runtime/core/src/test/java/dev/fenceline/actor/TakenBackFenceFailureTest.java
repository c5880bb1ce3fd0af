package dev.fenceline.actor;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.typesafe.config.ConfigFactory;
import dev.fenceline.FencelineException;
import dev.fenceline.LaneType;
import dev.fenceline.internal.FencelineSettings;
import dev.fenceline.internal.Keepalive;
import dev.fenceline.spi.DirectPosting;
import dev.fenceline.spi.PostedOperation;
import dev.fenceline.spi.RecordingLane;
import dev.fenceline.spi.TransportOp;
import java.nio.ByteBuffer;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.slf4j.LoggerFactory;

/**
 * A request a calling thread posted, given back when its lane was replaced, taken back by the
 * actor and queued behind a strong fence whose flush then fails: it fails with the fence, and its
 * batch is accounted, so that the posting count settles and the actor takes submissions again.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class TakenBackFenceFailureTest {
    private final ComponentFixture f = new ComponentFixture();
    private final FencelineSettings settings = FencelineSettings.fromConfig(ConfigFactory.parseString(
            "fenceline.endpoint.error-mode = peer\nfenceline.fence.mode = endpoint")
            .withFallback(ConfigFactory.defaultReference()).resolve());
    private final Keepalive keepalive = new Keepalive(0, 0);
    private final Operations ops = new Operations(settings, f.channel, LoggerFactory.getLogger(
            TakenBackFenceFailureTest.class), keepalive, System::nanoTime, () -> { }, () -> { });
    private final LaneChanges lanes = new LaneChanges(settings, f.channel, LoggerFactory.getLogger(
            TakenBackFenceFailureTest.class), ops, keepalive, System::nanoTime, (slot, c) -> { }, () -> { });

    /** A short lane calling threads may post on; it takes nothing itself (the test posts for them). */
    private static final class PostingLane extends RecordingLane implements DirectPosting {
        PostingLane(long id) {
            super(id, Set.of(LaneType.AM, LaneType.RMA, LaneType.AMO));
        }

        @Override
        public boolean postNow(PostedOperation op) {
            return false;
        }
    }

    @Test
    void aTakenBackRequestFailedWithItsFenceSettlesThePostingCount() throws Exception {
        RecordingLane bulk = ComponentFixture.bulkLane(1);
        PostingLane posting = new PostingLane(2);
        lanes.installFirst(List.of(bulk, posting));
        Request big = Request.rma(Request.Kind.PUT, 0, ByteBuffer.allocate(1 << 16), f.key.baseAddress(), f.key);
        ops.accept(big);
        assertEquals(1, bulk.ops.size(), "the bulk lane took it");
        ops.completed(bulk.ops.get(0).token(), 0); // completed, not flushed: a fence must flush the bulk lane

        // A calling thread posts a put of the next epoch on the posting lane, which then ends.
        f.channel.grant().publish(null, posting, 1, false);
        GrantSlot.Grant g = f.channel.grant().valid();
        assertNotNull(g, "granted");
        Request p = Request.rma(Request.Kind.PUT, 1, ByteBuffer.allocate(8), f.key.baseAddress(), f.key);
        f.channel.direct().postingStarted();
        PostedRequest posted = new PostedRequest(f.channel, g, p, TransportOp.rma(TransportOp.Kind.PUT,
                f.channel.direct().postedToken(), f.key.baseAddress(), f.key, p.local));
        assertTrue(posted.sequence() >= 0, "numbered under the grant");
        posted.returned(); // the lane gave it back as it ended
        lanes.replaced(new LaneProtocol.LaneReplaced(1, posting.id, ComponentFixture.shortLane(3)));
        ops.replayDone();
        ops.drainFenceQueue();
        assertEquals("flush", bulk.events.get(bulk.events.size() - 1), "the strong fence flushes the bulk lane");

        ops.flushFailed(bulk.flushTokens.get(0), new FencelineException("flush failed"));
        assertTrue(p.isDone(), "failed with its fence");
        ExecutionException e = org.junit.jupiter.api.Assertions.assertThrows(ExecutionException.class,
                () -> p.future().get());
        assertInstanceOf(FencelineException.class, e.getCause());
        assertTrue(f.channel.direct().postingSettledOrWake(), "the actor takes submissions again");
    }
}
