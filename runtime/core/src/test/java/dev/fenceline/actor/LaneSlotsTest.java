package dev.fenceline.actor;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.fenceline.FencelineException;
import dev.fenceline.internal.LaneTable;
import dev.fenceline.internal.OpClass;
import dev.fenceline.spi.PostStatus;
import dev.fenceline.spi.RecordingLane;
import dev.fenceline.spi.TransportOp;
import java.nio.ByteBuffer;
import java.util.List;
import org.agrona.collections.LongHashSet;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import java.util.concurrent.TimeUnit;

/** Lane slots without an actor: selection, parking after NO_RESOURCE, and what a reconfiguration unparks. */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class LaneSlotsTest {
    private final ComponentFixture f = new ComponentFixture();
    private final LaneSlots slots = new LaneSlots(f.answers, new LaneCounters());

    private TransportOp put(int bytes) {
        return TransportOp.rma(TransportOp.Kind.PUT, slots.nextToken(), f.key.baseAddress(), f.key,
                ByteBuffer.allocate(bytes));
    }

    @Test
    void requestsSpreadRoundRobinOverTheirClassesLanes() {
        RecordingLane a = ComponentFixture.shortLane(1);
        RecordingLane b = ComponentFixture.shortLane(2);
        RecordingLane bulk = ComponentFixture.bulkLane(3);
        slots.install(LaneTable.of(List.of(a, b, bulk)));
        assertEquals(List.of(0, 1, 0, 1), List.of(slots.pick(OpClass.RMA_SHORT), slots.pick(OpClass.RMA_SHORT),
                slots.pick(OpClass.RMA_SHORT), slots.pick(OpClass.RMA_SHORT)));
        assertEquals(2, slots.pick(OpClass.RMA_LARGE));
        slots.install(LaneTable.of(List.of(bulk)));
        assertEquals(-1, slots.pick(OpClass.ATOMIC), "no lane carries atomics, not even over AM");
    }

    @Test
    void noResourceParksAnOperationAndEverythingBehindItUntilTheLaneIsReady() {
        RecordingLane lane = ComponentFixture.shortLane(1);
        slots.install(LaneTable.of(List.of(lane)));
        lane.answer = PostStatus.NO_RESOURCE;
        TransportOp first = put(1);
        slots.post(0, first);
        slots.post(0, put(2));
        long flush = slots.nextToken();
        assertTrue(slots.flush(0, flush, false), "a flush behind parked work waits too");
        assertEquals(List.of("busy"), lane.events, "the second waits without touching the lane");
        assertTrue(slots.anyParked());

        lane.answer = PostStatus.IN_PROGRESS;
        lane.flushAnswer = PostStatus.COMPLETED;
        slots.ready(0);
        assertEquals(List.of("busy", "PUT:1", "PUT:2", "flush"), lane.events, "in post order");
        assertEquals(List.of("flushed:" + flush), f.answered, "a parked flush answered at once is reported");
        assertFalse(slots.anyParked());
        assertEquals(first.token(), lane.ops.get(0).token());
    }

    @Test
    void synchronousAnswersGoToTheAnswers() {
        RecordingLane lane = ComponentFixture.shortLane(1);
        slots.install(LaneTable.of(List.of(lane)));
        lane.answer = PostStatus.COMPLETED;
        TransportOp op = put(8);
        op.result(7);
        slots.post(0, op);
        lane.refusal = new FencelineException("never on this lane");
        TransportOp refused = put(8);
        slots.post(0, refused);
        assertEquals(List.of("completed:" + op.token() + "=7", "failed:" + refused.token()), f.answered);
        lane.flushAnswer = PostStatus.COMPLETED;
        assertFalse(slots.flush(0, slots.nextToken(), false), "already flushed: no answer follows");
    }

    @Test
    void unparkingAChangedSlotReturnsOnlyWhatNeverReachedItsTransport() {
        RecordingLane a = ComponentFixture.shortLane(1);
        RecordingLane b = ComponentFixture.bulkLane(2);
        slots.install(LaneTable.of(List.of(a, b)));
        TransportOp sent = put(1);
        slots.post(0, sent);
        a.answer = PostStatus.NO_RESOURCE;
        TransportOp parked = put(2);
        slots.post(0, parked);
        b.answer = PostStatus.NO_RESOURCE;
        TransportOp other = put(3);
        slots.post(1, other);
        LongHashSet neverSent = slots.unpark(0b01);
        assertTrue(neverSent.contains(parked.token()));
        assertFalse(neverSent.contains(sent.token()));
        assertFalse(neverSent.contains(other.token()), "slot 1 did not change");
        assertTrue(slots.anyParked(), "slot 1's parked work stays");
    }

    @Test
    void staleConnectionsAreNotCurrentAndUseIsForgottenWhenASlotChanges() {
        RecordingLane a = ComponentFixture.shortLane(1);
        RecordingLane b = ComponentFixture.bulkLane(2);
        slots.install(LaneTable.of(List.of(a, b)));
        assertTrue(slots.current(0, 1));
        assertFalse(slots.current(0, 2));
        assertFalse(slots.current(5, 1), "out of range");
        slots.post(1, put(1 << 16));
        assertEquals(0b10, slots.usedLive());
        RecordingLane b2 = ComponentFixture.bulkLane(3);
        slots.install(slots.table().withSlot(1, b2));
        slots.forgetUse(0b10);
        assertEquals(0, slots.usedLive(), "the new connection has carried nothing");
        assertFalse(slots.current(1, 2));
    }

    @Test
    void closingTheEndpointClosesCurrentAndGivenUpConnections() {
        RecordingLane a = ComponentFixture.shortLane(1);
        RecordingLane b = ComponentFixture.shortLane(2);
        slots.install(LaneTable.of(List.of(a, b)));
        slots.givenUp(1, b);
        slots.install(slots.table().withFailed(1));
        slots.closeAll(new Revocations());
        assertEquals(List.of("close", "revoke"), a.events, "closed, then asked what became of its copies");
        assertEquals(List.of("close"), b.events, "given up before: asked then");
    }
}
