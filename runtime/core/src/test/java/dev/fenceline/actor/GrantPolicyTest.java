package dev.fenceline.actor;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.fenceline.AtomicOp;
import dev.fenceline.LaneType;
import dev.fenceline.RemoteKey;
import dev.fenceline.internal.LaneTable;
import dev.fenceline.spi.DirectAccess;
import dev.fenceline.spi.DirectPosting;
import dev.fenceline.spi.PostedOperation;
import dev.fenceline.spi.LaneConnection;
import dev.fenceline.spi.LaneListener;
import dev.fenceline.spi.PostStatus;
import dev.fenceline.spi.TransportOp;
import java.nio.ByteBuffer;
import java.util.List;
import java.util.Set;
import dev.fenceline.spi.RecordingLane;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import java.util.concurrent.TimeUnit;

/** When the fast path's grant is published, without an actor. */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class GrantPolicyTest {
    private final ComponentFixture f = new ComponentFixture();
    private final LaneSlots slots = new LaneSlots(f.answers, new LaneCounters());
    private final GrantPolicy grants = new GrantPolicy(slots, f.channel, true);

    /** A lane of every type that carries nothing. */
    private abstract static class TestLane implements LaneConnection {
        private final long id;
        /** Its transport's name: the lane table's tiers go by it. */
        String transport = "direct";

        TestLane(long id) {
            this.id = id;
        }

        @Override
        public long id() {
            return id;
        }

        @Override
        public String transport() {
            return transport;
        }

        @Override
        public Set<LaneType> types() {
            return Set.of(LaneType.AM, LaneType.RMA, LaneType.AMO);
        }

        @Override
        public int maxFragment() {
            return 1 << 16;
        }

        @Override
        public void bind(LaneListener listener) {
        }

        @Override
        public PostStatus post(TransportOp op) {
            return PostStatus.NO_RESOURCE;
        }

        @Override
        public PostStatus flush(long token) {
            return PostStatus.COMPLETED;
        }

        @Override
        public void fence() {
        }


        @Override
        public boolean deduplicates() {
            return true;
        }

        @Override
        public void close() {
        }
    }

    /** A lane that can act directly. */
    private static final class DirectLane extends TestLane implements DirectAccess {
        DirectLane(long id) {
            super(id);
        }

        @Override
        public boolean putNow(RemoteKey key, long address, ByteBuffer src) {
            return true;
        }

        @Override
        public boolean atomicPostNow(RemoteKey key, long address, AtomicOp op, int width, long operand) {
            return true;
        }

        @Override
        public boolean getNow(RemoteKey key, long address, ByteBuffer dst) {
            return true;
        }

        @Override
        public Long atomicFetchNow(RemoteKey key, long address, AtomicOp op, int width, long operand, long compare) {
            return 0L;
        }
    }

    @Test
    void anIdleEndpointOnOneDirectLaneIsGrantedAndAnythingOutstandingRevokesIt() {
        DirectLane lane = new DirectLane(1);
        slots.install(LaneTable.of(List.of(lane)));
        grants.update(true);
        GrantSlot.Grant g = f.channel.grant().valid();
        assertNotNull(g);
        assertTrue(g.activeMessages(), "active messages take the same lane");
        assertEquals(0, grants.messageLane());
        grants.update(false);
        assertNull(f.channel.grant().valid());
    }

    @Test
    void parkedWorkALaneThatCannotActOrTwoRmaLanesMeanNoGrant() {
        DirectLane lane = new DirectLane(1);
        slots.install(LaneTable.of(List.of(lane)));
        slots.post(0, TransportOp.rma(TransportOp.Kind.PUT, slots.nextToken(), f.key.baseAddress(), f.key,
                ByteBuffer.allocate(1)));
        grants.update(true);
        assertNull(f.channel.grant().valid(), "work waits on the lane");

        LaneSlots plain = new LaneSlots(f.answers, new LaneCounters());
        plain.install(LaneTable.of(List.of(ComponentFixture.shortLane(2))));
        new GrantPolicy(plain, f.channel, true).update(true);
        assertNull(f.channel.grant().valid(), "the lane cannot act directly");

        LaneSlots two = new LaneSlots(f.answers, new LaneCounters());
        two.install(LaneTable.of(List.of(new DirectLane(3), new DirectLane(4))));
        GrantPolicy spread = new GrantPolicy(two, f.channel, true);
        spread.update(true);
        assertNull(f.channel.grant().valid(), "short RMA is spread over two lanes");
        assertFalse(spread.messageLane() >= 0);
    }

    @Test
    void directMessagesStopWhileAStandbyLaneCouldTakeThemOver() {
        RecordingLane standby = new RecordingLane(9, Set.of(LaneType.AM, LaneType.RMA, LaneType.AMO));
        standby.transport = "tcp";
        DirectLane lane = new DirectLane(8);
        slots.install(LaneTable.of(List.of(lane, standby), List.of("direct", "tcp")));
        grants.update(true);
        GrantSlot.Grant g = f.channel.grant().valid();
        assertNotNull(g, "puts and atomics still act directly on the preferred lane");
        assertFalse(g.activeMessages(), "a direct message could not be re-sent on the standby lane");

        LaneSlots noFailover = new LaneSlots(f.answers, new LaneCounters());
        noFailover.install(LaneTable.of(List.of(new DirectLane(10), standby), List.of("direct", "tcp")));
        new GrantPolicy(noFailover, f.channel, false).update(true);
        assertTrue(f.channel.grant().valid().activeMessages(), "no failover, nothing to re-send: direct again");

        LaneSlots alone = new LaneSlots(f.answers, new LaneCounters());
        alone.install(LaneTable.of(List.of(new DirectLane(11), standby), List.of("direct", "tcp")).withFailed(1));
        new GrantPolicy(alone, f.channel, true).update(true);
        assertTrue(f.channel.grant().valid().activeMessages(), "the standby lane failed: direct again");
    }

    /** A lane that takes posted operations (or, turned off, does not). */
    private static final class PostingLane extends TestLane implements DirectPosting {
        private final boolean on;

        PostingLane(long id, boolean on) {
            super(id);
            this.on = on;
        }

        @Override
        public boolean postsDirectly() {
            return on;
        }

        @Override
        public boolean postNow(PostedOperation op) {
            return false;
        }
    }

    @Test
    void postingLanesAreGrantedTheFirstRailAndTheGrantMovesOnlyOnceEveryPostedAnswerIsIn() {
        PostingLane first = new PostingLane(21, true);
        PostingLane second = new PostingLane(22, true);
        slots.install(LaneTable.of(List.of(first, second)));
        grants.update(true);
        GrantSlot.Grant g = f.channel.grant().valid();
        assertNotNull(g, "posting needs no single lane: idle-time operations take the first rail");
        assertTrue(g.posting() == first && g.lane() == null && g.slot() == 0, g.toString());
        assertFalse(g.activeMessages(), "active messages are never posted");

        f.channel.direct().answers.queued(); // posted on the first rail, not answered yet
        slots.install(LaneTable.of(List.of(first, second)).withFailed(0));
        grants.update(true);
        assertNull(f.channel.grant().valid(), "answers of two rails would interleave in the ledger");
        f.channel.direct().postedCounted(false);
        f.channel.direct().postedSettled();
        grants.update(true);
        assertTrue(f.channel.grant().valid().posting() == second, "granted on the live rail once answered");

        LaneSlots off = new LaneSlots(f.answers, new LaneCounters());
        off.install(LaneTable.of(List.of(new PostingLane(23, false))));
        new GrantPolicy(off, f.channel, true).update(true);
        assertNull(f.channel.grant().valid(), "direct-operations = off");
    }

    /**
     * A calling thread looked at the grant and has not counted what it sends yet (it is between the two):
     * the grant does not move to another lane until it is done, or what it sends on the old lane could
     * be passed by what it sends after a fence on the new one.
     */
    @Test
    void theGrantDoesNotMoveWhileACallerIsBetweenItsLookAndItsCount() {
        PostingLane first = new PostingLane(41, true);
        PostingLane second = new PostingLane(42, true);
        slots.install(LaneTable.of(List.of(first, second)));
        grants.update(true);
        assertTrue(f.channel.grant().valid().posting() == first);
        f.channel.direct().postingStarted(); // a caller passed the grant check on the first rail
        slots.install(LaneTable.of(List.of(first, second)).withFailed(0));
        grants.update(true);
        assertNull(f.channel.grant().valid(), "moved while a caller may still send on the first rail");
        f.channel.direct().postingEnded(1);
        grants.update(true);
        assertTrue(f.channel.grant().valid().posting() == second, "granted on the live rail once it is done");
    }

    /**
     * A failed UCT lane came back while operations posted on the tcp standby were unanswered: a caller's
     * fence does not reach the actor, so a direct get on the recovered lane could read memory a posted put
     * before the fence had not written yet (seen once in UcxAndTcpTest).
     */
    @Test
    void aDirectGrantWaitsUntilOperationsPostedOnAnotherLaneAreAnswered() {
        PostingLane standby = new PostingLane(31, true);
        standby.transport = "tcp";
        slots.install(LaneTable.of(List.of(new DirectLane(30), standby), List.of("direct", "tcp")).withFailed(0));
        grants.update(true);
        assertTrue(f.channel.grant().valid().posting() == standby, "the standby takes posted operations");

        f.channel.direct().answers.queued(); // posted on the standby, not answered yet
        DirectLane recovered = new DirectLane(32);
        slots.install(LaneTable.of(List.of(recovered, standby), List.of("direct", "tcp")));
        grants.update(true);
        assertNull(f.channel.grant().valid(), "a direct operation would pass the posted one");
        f.channel.direct().postedCounted(false);
        f.channel.direct().postedSettled();
        grants.update(true);
        GrantSlot.Grant g = f.channel.grant().valid();
        assertNotNull(g, "granted on the recovered lane once the posted one is answered");
        assertTrue(g.lane() == recovered && g.posting() == null, g.toString());
    }

    @Test
    void aSubmissionVoidsAGrant() {
        slots.install(LaneTable.of(List.of(new DirectLane(1))));
        grants.update(true);
        assertNotNull(f.channel.grant().valid());
        f.channel.submit(Request.flush(0));
        assertNull(f.channel.grant().valid(), "stamped before the submission");
    }
}
