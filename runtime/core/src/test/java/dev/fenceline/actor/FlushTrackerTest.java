package dev.fenceline.actor;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.fenceline.FencelineException;
import dev.fenceline.internal.LaneTable;
import dev.fenceline.spi.PostStatus;
import dev.fenceline.spi.RecordingLane;
import dev.fenceline.spi.TransportOp;
import java.nio.ByteBuffer;
import java.util.List;
import java.util.concurrent.ExecutionException;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import java.util.concurrent.TimeUnit;

/** Flush tracking without an actor: when a user flush starts, what it waits for, and its owners' tokens. */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class FlushTrackerTest {
    private final ComponentFixture f = new ComponentFixture();
    private final LaneSlots slots = new LaneSlots(f.answers, new LaneCounters());
    private final InflightTable inflight = new InflightTable();
    private final FlushTracker flushes = new FlushTracker(slots, inflight, f.channel, f.channel.counters(), System::nanoTime);
    private final RecordingLane l0 = ComponentFixture.shortLane(1);
    private final RecordingLane l1 = ComponentFixture.bulkLane(2);

    FlushTrackerTest() {
        slots.install(LaneTable.of(List.of(l0, l1)));
    }

    private Request userFlush() {
        Request flush = Request.flush(0);
        inflight.order(flush);
        flushes.add(flush);
        return flush;
    }

    private Request outstandingPut(int lane) {
        Request r = f.put(8, 0);
        inflight.order(r);
        inflight.admit(r);
        slots.post(lane, TransportOp.rma(TransportOp.Kind.PUT, slots.nextToken(), f.key.baseAddress(), f.key,
                ByteBuffer.allocate(8)));
        return r;
    }

    @Test
    void aFlushOfAnEndpointThatSentNothingCompletesWithoutALane() {
        Request flush = userFlush();
        flushes.progress(seq -> false);
        assertTrue(flush.future().isDone() && !flush.future().isCompletedExceptionally());
        assertEquals(List.of(), l0.events);
        assertFalse(flushes.hasUserFlushes());
        assertEquals(1, f.channel.counters().get(EndpointCounters.Counter.FLUSHES));
    }

    @Test
    void aFlushWaitsForEarlierOperationsAndOneFlushPerUsedLane() {
        Request put = outstandingPut(0);
        Request flush = userFlush();
        flushes.progress(seq -> false);
        assertEquals(List.of("PUT:8", "flush"), l0.events);
        assertEquals(List.of(), l1.events, "lane 1 never carried anything");
        FlushTracker.Token t = flushes.take(l0.flushTokens.get(0));
        assertInstanceOf(FlushTracker.UserFlush.class, t.owner());
        flushes.answered((FlushTracker.UserFlush) t.owner());
        flushes.progress(seq -> false);
        assertFalse(flush.future().isDone(), "the put is still outstanding");
        inflight.retire(put);
        flushes.retired(put.seq);
        flushes.progress(seq -> false);
        assertTrue(flush.future().isDone());
    }

    @Test
    void aFlushDoesNotStartBeforeFenceQueuedWorkIssuedBeforeIt() {
        outstandingPut(0);
        Request flush = userFlush();
        flushes.progress(seq -> seq == flush.seq);
        assertEquals(List.of("PUT:8"), l0.events, "not started");
        flushes.progress(seq -> false);
        assertEquals(List.of("PUT:8", "flush"), l0.events);
    }

    @Test
    void aFlushThatLostALaneFlushFlushesEveryLiveLaneAgainAfterTheReplay() {
        outstandingPut(0);
        outstandingPut(1);
        Request flush = userFlush();
        flushes.progress(seq -> false);
        assertEquals(1, l0.flushTokens.size());
        RecordingLane l1b = ComponentFixture.bulkLane(3);
        slots.install(slots.table().withSlot(1, l1b));
        assertEquals(0, flushes.dropStale(), "no fence flush was out");
        assertNull(flushes.take(l1.flushTokens.get(0)), "the dropped token is forgotten");
        flushes.reissueLost();
        assertEquals(2, l0.flushTokens.size(), "every live lane again");
        assertEquals(1, l1b.flushTokens.size(), "the replacement included");
        assertFalse(flush.future().isDone());
    }

    @Test
    void fenceAndProbeTokensAreTheirOwnersAndADroppedFenceFlushIsCounted() {
        assertTrue(flushes.issue(FlushTracker.FenceFlush.INSTANCE, 0));
        assertTrue(flushes.issue(FlushTracker.Probe.INSTANCE, 1));
        assertSame(FlushTracker.Probe.INSTANCE, flushes.peek(l1.flushTokens.get(0)).owner());
        slots.install(slots.table().withFailed(0));
        assertEquals(1, flushes.dropStale());
        l1.flushAnswer = PostStatus.COMPLETED;
        assertFalse(flushes.issue(FlushTracker.Probe.INSTANCE, 1), "answered at once");
        assertNull(flushes.peek(l1.flushTokens.get(1)), "its token is not kept");
        flushes.dropAll(FlushTracker.Probe.INSTANCE);
        assertNull(flushes.peek(l1.flushTokens.get(0)));
    }

    @Test
    void probesKeepTheirLaneAndConnectionAndASecondProbeOnALaneIsKeptToo() {
        assertTrue(flushes.issue(FlushTracker.Probe.INSTANCE, 0));
        assertTrue(flushes.issue(FlushTracker.Probe.INSTANCE, 0)); // the first still out: both are tracked
        assertTrue(flushes.issue(FlushTracker.Probe.INSTANCE, 1));
        long first = l0.flushTokens.get(0);
        long second = l0.flushTokens.get(1);
        FlushTracker.Token a = flushes.take(second);
        assertEquals(new FlushTracker.Token(FlushTracker.Probe.INSTANCE, 0, l0.id()), a);
        assertNull(flushes.take(second), "answered once");
        assertEquals(new FlushTracker.Token(FlushTracker.Probe.INSTANCE, 0, l0.id()), flushes.peek(first));
        assertEquals(new FlushTracker.Token(FlushTracker.Probe.INSTANCE, 0, l0.id()), flushes.take(first));
        assertNull(flushes.peek(first));

        RecordingLane l1b = ComponentFixture.bulkLane(3);
        slots.install(slots.table().withSlot(1, l1b));
        assertEquals(0, flushes.dropStale(), "a probe is not a fence flush");
        assertNull(flushes.take(l1.flushTokens.get(0)), "the replaced connection's probe is forgotten");
        assertTrue(flushes.issue(FlushTracker.Probe.INSTANCE, 1));
        assertEquals(new FlushTracker.Token(FlushTracker.Probe.INSTANCE, 1, l1b.id()),
                flushes.take(l1b.flushTokens.get(0)), "the slot serves the new connection");
    }

    @Test
    void aFlushReportsTheFirstImplicitFailureBeforeItAndAFailedLaneFlushFailsIt() throws Exception {
        FencelineException earlier = new FencelineException("an implicit put failed");
        f.channel.implicit().failed(earlier, 0);
        Request flush = userFlush();
        flush.submissionNumber = 1;
        flushes.progress(seq -> false);
        assertSame(earlier, org.junit.jupiter.api.Assertions.assertThrows(ExecutionException.class,
                () -> flush.future().get()).getCause());

        outstandingPut(0);
        Request second = userFlush();
        flushes.progress(seq -> false);
        FlushTracker.Token t = flushes.peek(l0.flushTokens.get(0));
        FencelineException cause = new FencelineException("flush failed");
        flushes.fail((FlushTracker.UserFlush) t.owner(), cause);
        assertTrue(second.future().isCompletedExceptionally());
        assertNull(flushes.peek(l0.flushTokens.get(0)));
        assertFalse(flushes.hasUserFlushes());
    }
}
