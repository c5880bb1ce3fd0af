package dev.fenceline.actor;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.fenceline.internal.FenceMode;
import dev.fenceline.internal.LaneTable;
import dev.fenceline.spi.PostStatus;
import dev.fenceline.spi.RecordingLane;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.slf4j.LoggerFactory;
import org.junit.jupiter.api.Timeout;
import java.util.concurrent.TimeUnit;

/**
 * Fence admission without an actor: which requests go at once, which wait, and the strong fence's
 * life (started, completed through the mailbox, failed, interrupted by a reconfiguration).
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class FenceAdmissionTest {
    private final ComponentFixture f = new ComponentFixture();
    private final LaneSlots slots = new LaneSlots(f.answers, new LaneCounters());
    private final InflightTable inflight = new InflightTable();
    private final FlushTracker flushes = new FlushTracker(slots, inflight, f.channel, f.channel.counters(), System::nanoTime);
    private final List<String> told = new ArrayList<>();
    private final FenceAdmission fences = new FenceAdmission(FenceMode.ENDPOINT, slots, flushes, f.channel.counters(),
            LoggerFactory.getLogger(FenceAdmissionTest.class), "test", () -> told.add("fenceDone"),
            () -> told.add("drain"), System::nanoTime, f.channel.fenceLatency());
    private final RecordingLane l0 = ComponentFixture.shortLane(1);
    private final RecordingLane l1 = ComponentFixture.bulkLane(2);

    FenceAdmissionTest() {
        slots.install(LaneTable.of(List.of(l0, l1)));
    }

    private Request on(int lane, long epoch) {
        Request r = f.put(8, epoch);
        inflight.order(r);
        r.lane = lane;
        return r;
    }

    /** Work of epoch 0 on both lanes, then a request of epoch 1 on lane 0: a strong fence over both. */
    private Request startStrongFence() {
        assertEquals(FenceAdmission.Verdict.POST, fences.admit(on(0, 0), false, false));
        assertEquals(FenceAdmission.Verdict.POST, fences.admit(on(1, 0), false, false));
        Request after = on(0, 1);
        assertEquals(FenceAdmission.Verdict.QUEUED, fences.admit(after, false, false));
        return after;
    }

    @Test
    void aStrongFenceFlushesBothLanesAndReleasesTheQueueThroughTheMailbox() {
        Request after = startStrongFence();
        assertEquals(List.of("flush"), l0.events);
        assertEquals(List.of("flush"), l1.events);
        assertNull(fences.release(), "nothing leaves the queue while the fence flies");
        assertFalse(fences.settled());
        fences.laneFlushed();
        assertEquals(List.of(), told, "one lane is not enough");
        fences.laneFlushed();
        assertEquals(List.of("drain"), told, "the drain is a message, deduplicated");
        fences.drainArrived();
        assertSame(after, fences.release());
        assertEquals(1, f.channel.counters().get(EndpointCounters.Counter.STRONG_FENCES));
        assertEquals(1, f.channel.counters().get(EndpointCounters.Counter.FENCE_QUEUED));
    }

    @Test
    void aFenceWithNothingToFlushCompletesThroughTheMailboxNotInsideTheDecision() {
        l0.flushAnswer = PostStatus.COMPLETED;
        l1.flushAnswer = PostStatus.COMPLETED;
        startStrongFence();
        assertEquals(List.of("fenceDone"), told);
        assertFalse(fences.settled(), "still in flight until the message arrives");
        fences.completeIfDone();
        assertEquals(List.of("fenceDone", "drain"), told);
    }

    @Test
    void duringAReplayNoStrongFenceStarts() {
        fences.admit(on(0, 0), false, false);
        fences.admit(on(1, 0), false, false);
        assertEquals(FenceAdmission.Verdict.QUEUED, fences.admit(on(0, 1), false, true));
        assertEquals(List.of(), l0.events);
        assertTrue(fences.queuedBefore(Long.MAX_VALUE));
    }

    @Test
    void aFailedFenceHandsBackTheQueueAndTheEpochStays() {
        Request after = startStrongFence();
        assertEquals(List.of(after), fences.fail(new RuntimeException("lane flush failed")));
        assertTrue(fences.settled());
        Request again = on(0, 1);
        assertEquals(FenceAdmission.Verdict.QUEUED, fences.admit(again, false, false), "a new strong fence");
        assertEquals(2, l0.flushTokens.size());
    }

    @Test
    void anInterruptedFenceGoesOutAgainOverEveryLiveLaneAfterTheReplay() {
        startStrongFence();
        RecordingLane l0b = ComponentFixture.shortLane(3);
        slots.install(slots.table().withSlot(0, l0b));
        fences.slotsChanged(0b01, 0b01, flushes.dropStale());
        fences.laneFlushed(); // lane 1's answer: the fence waits for its restart all the same
        assertEquals(List.of(), told);
        fences.replayDone();
        assertEquals(List.of("flush"), l0b.events, "re-issued on the replacement");
        assertEquals(List.of("flush", "flush"), l1.events, "and on every other live lane");
    }

    @Test
    void onOneLaneAFenceIsWeak() {
        fences.admit(on(0, 0), false, false);
        assertEquals(FenceAdmission.Verdict.POST, fences.admit(on(0, 1), false, false));
        assertEquals(List.of("fence"), l0.events);
        assertEquals(1, f.channel.counters().get(EndpointCounters.Counter.WEAK_FENCES));
    }

    /**
     * A get, a fence, then a put on the same lane: the weak fence would let the put follow at once,
     * but the put waits until the get is answered (as behind an RDMA fence), so a get whose answer
     * is lost with the lane never has to read again after the put landed. Gets of the later epoch
     * do not wait; the get's answer releases the put through the mailbox.
     */
    @Test
    void workOfALaterEpochWaitsForTheGetsBeforeItButOtherGetsDoNot() {
        fences.holds(inflight);
        Request get = Request.rma(Request.Kind.GET, 0, java.nio.ByteBuffer.allocate(8), f.key.baseAddress(), f.key);
        inflight.order(get);
        get.lane = 0;
        assertEquals(FenceAdmission.Verdict.POST, fences.admit(get, false, false));
        inflight.number(get, 1); // posted: open until retired
        Request put = on(0, 1);
        assertEquals(FenceAdmission.Verdict.QUEUED, fences.admit(put, false, false), "the get is unanswered");
        assertEquals(List.of(), l0.events, "no flush: the put only waits for the get's answer");
        Request laterGet = Request.rma(Request.Kind.GET, 1, java.nio.ByteBuffer.allocate(8), f.key.baseAddress(),
                f.key);
        inflight.order(laterGet);
        laterGet.lane = 1;
        assertEquals(FenceAdmission.Verdict.QUEUED, fences.admit(laterGet, false, false),
                "behind the queued put, in epoch order");
        inflight.retire(get);
        assertEquals(List.of("drain"), told);
        fences.drainArrived();
        assertSame(put, fences.release());
        assertEquals(FenceAdmission.Verdict.POST, fences.admit(put, true, false), "a weak fence on lane 0 now");
        assertEquals(1, f.channel.counters().get(EndpointCounters.Counter.WEAK_FENCES));
        inflight.retire(get); // retiring twice changes nothing
        assertEquals(List.of("drain"), told);
    }
}
