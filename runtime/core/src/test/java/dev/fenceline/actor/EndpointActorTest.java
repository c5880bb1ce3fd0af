package dev.fenceline.actor;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.fenceline.AtomicOp;
import dev.fenceline.ConfigurationException;
import dev.fenceline.LaneType;
import dev.fenceline.RemoteAccessException;
import dev.fenceline.spi.RecordingLane;
import dev.fenceline.spi.PostStatus;
import dev.fenceline.spi.TransportOp;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import org.apache.pekko.actor.testkit.typed.javadsl.BehaviorTestKit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import java.util.concurrent.TimeUnit;

/**
 * Tier 2: one endpoint actor driven one message at a time with {@link BehaviorTestKit}, over
 * recording lanes, so every transport call the fence engine makes is visible and ordered.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class EndpointActorTest extends EndpointActorFixture {
    /** An 8-byte put (short: lane 0) and a 64 KiB put (bulk: lane 1), both not awaited. */
    private void workOnBothLanes() {
        facade.put(ByteBuffer.allocate(8), key.baseAddress(), key);
        facade.put(ByteBuffer.allocate(1 << 16), key.baseAddress(), key);
    }

    /**
     * A lane whose zero-copy needs registered local memory (RDMA's shape): a put from a registered
     * buffer is split by the zero-copy limit and carries the buffer's handle of the lane's transport,
     * one from an unregistered buffer by the copy limit, without a handle; each fragment says its
     * protocol, chosen from the lane's capabilities.
     */
    @Test
    void operationsCarryTheProtocolTheLaneCapabilitiesGiveAndTheLocalHandleZeroCopyNeeds() {
        RecordingLane rdma = new RecordingLane(1, Set.of(LaneType.AM, LaneType.RMA, LaneType.RMA_BW, LaneType.AMO));
        rdma.capabilities = new dev.fenceline.spi.LaneCapabilities(64, 8192, 1 << 20, true,
                Set.of(dev.fenceline.AtomicOp.ADD), Set.of(dev.fenceline.AtomicOp.ADD), true, true, false);
        ByteBuffer registered = ByteBuffer.allocateDirect(1 << 20);
        dev.fenceline.spi.RegionHandle handle = new dev.fenceline.spi.RegionHandle() {
            @Override
            public byte[] transportData() {
                return new byte[0];
            }

            @Override
            public void registered(long keyId) {
            }

            @Override
            public void close() {
            }
        };
        channel.localRegions((local, transport) -> transport.equals("recording") && local.isDirect()
                && sameMemory(local, registered) ? handle : null);
        BehaviorTestKit<EndpointProtocol.Command> kit = spawn("endpoint", rdma);
        facade.put(registered.slice(0, 300_000), key.baseAddress(), key);
        facade.put(ByteBuffer.allocateDirect(20_000), key.baseAddress(), key);
        facade.put(ByteBuffer.allocate(8), key.baseAddress(), key);
        facade.put(registered.slice(0, 4000), key.baseAddress(), key);
        facade.atomicPost64(dev.fenceline.AtomicOp.ADD, key.baseAddress(), key, 1);
        facade.atomicPost64(dev.fenceline.AtomicOp.XOR, key.baseAddress(), key, 1);
        settle(kit);
        List<String> got = new java.util.ArrayList<>();
        for (dev.fenceline.spi.TransportOp op : rdma.ops) {
            got.add(op.kind() + ":" + op.bytes() + ":" + op.protocol() + (op.localHandle() == handle ? ":handle" : ""));
        }
        assertEquals(List.of("PUT:262144:ZCOPY:handle", "PUT:37856:ZCOPY:handle", // by fragment-size, 256 KiB
                "PUT:8192:BCOPY", "PUT:8192:BCOPY", "PUT:3616:BCOPY", // unregistered: split by the copy limit
                "PUT:8:SHORT",
                "PUT:4000:BCOPY:handle", // registered, but small enough to copy
                "ATOMIC_POST:8:HARDWARE_ATOMIC", "ATOMIC_POST:8:SOFTWARE_ATOMIC"), got);
    }

    /**
     * An RDMA lane that does 64-bit ADD in hardware beside a software lane: every fetch-add goes to
     * the RDMA lane, and XOR, which neither does in hardware, is spread over both.
     */
    @Test
    void eachAtomicGoesToALaneWhoseHardwareDoesIt() {
        RecordingLane software = new RecordingLane(1, Set.of(LaneType.AM, LaneType.RMA, LaneType.AMO));
        RecordingLane rdma = new RecordingLane(2, Set.of(LaneType.RMA_BW, LaneType.AMO));
        rdma.capabilities = new dev.fenceline.spi.LaneCapabilities(64, 8192, 1 << 20, false,
                Set.of(), Set.of(dev.fenceline.AtomicOp.ADD), false, true, false);
        BehaviorTestKit<EndpointProtocol.Command> kit = spawn("endpoint", software, rdma);
        for (int i = 0; i < 4; i++) {
            facade.atomicPost64(dev.fenceline.AtomicOp.ADD, key.baseAddress(), key, 1);
            facade.atomicPost64(dev.fenceline.AtomicOp.XOR, key.baseAddress(), key, 1);
        }
        settle(kit);
        List<String> soft = new java.util.ArrayList<>();
        List<String> hard = new java.util.ArrayList<>();
        software.ops.forEach(op -> soft.add(op.atomicOp() + ":" + op.protocol()));
        rdma.ops.forEach(op -> hard.add(op.atomicOp() + ":" + op.protocol()));
        assertEquals(List.of("XOR:SOFTWARE_ATOMIC", "XOR:SOFTWARE_ATOMIC"), soft);
        assertEquals(List.of("ADD:HARDWARE_ATOMIC", "ADD:HARDWARE_ATOMIC", "XOR:SOFTWARE_ATOMIC",
                "ADD:HARDWARE_ATOMIC", "ADD:HARDWARE_ATOMIC", "XOR:SOFTWARE_ATOMIC"), hard, "XOR alternates");
    }

    private static boolean sameMemory(ByteBuffer a, ByteBuffer region) {
        long at = io.netty.util.internal.PlatformDependent.directBufferAddress(a) + a.position();
        long base = io.netty.util.internal.PlatformDependent.directBufferAddress(region);
        return at >= base && at - base <= region.capacity() - a.remaining();
    }

    @Test
    void fenceAcrossTwoLanesFlushesBothBeforeReleasingTheRequest() {
        RecordingLane l0 = shortLane();
        RecordingLane l1 = bulkLane();
        BehaviorTestKit<EndpointProtocol.Command> kit = spawn("endpoint", l0, l1);
        facade.put(ByteBuffer.allocate(8), key.baseAddress(), key);
        facade.put(ByteBuffer.allocate(1 << 20), key.baseAddress(), key);
        settle(kit);
        assertEquals(List.of("PUT:8"), l0.events);
        assertEquals(16, l1.events.size(), "1 MiB in 64 KiB fragments");

        facade.fence();
        CompletableFuture<Void> after = facade.put(ByteBuffer.allocate(1), key.baseAddress(), key).toCompletableFuture();
        settle(kit);
        assertEquals(List.of("PUT:8", "flush"), l0.events, "the request waits for the strong fence");
        assertEquals("flush", l1.events.get(l1.events.size() - 1));
        assertEquals(1, channel.counters().get(EndpointCounters.Counter.STRONG_FENCES));
        assertEquals(1, channel.counters().get(EndpointCounters.Counter.FENCE_QUEUED));

        kit.run(new LaneProtocol.LaneFlushed(0, l0.id, l0.flushTokens.get(0)));
        settle(kit);
        assertEquals(List.of("PUT:8", "flush"), l0.events, "one lane flushed is not enough");
        kit.run(new LaneProtocol.LaneFlushed(1, l1.id, l1.flushTokens.get(0)));
        settle(kit);
        assertEquals(List.of("PUT:8", "flush", "PUT:1"), l0.events);
        assertFalse(after.isDone(), "posted, not yet completed");
        kit.run(new LaneProtocol.OpCompleted(0, l0.id, l0.ops.get(1).token(), 0));
        assertTrue(after.isDone());
    }

    @Test
    void failedStrongFenceFailsTheQueueKeepsTheEpochAndStaysUsable() {
        RecordingLane l0 = shortLane();
        RecordingLane l1 = bulkLane();
        BehaviorTestKit<EndpointProtocol.Command> kit = spawn("endpoint", "peer", l0, l1);
        workOnBothLanes();
        facade.fence();
        CompletableFuture<Void> a = facade.put(ByteBuffer.allocate(1), key.baseAddress(), key).toCompletableFuture();
        CompletableFuture<Void> b = facade.put(ByteBuffer.allocate(2), key.baseAddress(), key).toCompletableFuture();
        settle(kit);
        assertEquals(1, l0.flushTokens.size());
        RemoteAccessException cause = new RemoteAccessException(RemoteAccessException.Reason.REGION_CLOSED, "gone");
        kit.run(new LaneProtocol.LaneFlushFailed(0, l0.id, l0.flushTokens.get(0), cause));
        assertTrue(a.isCompletedExceptionally() && b.isCompletedExceptionally(), "queued requests fail");
        org.junit.jupiter.api.Assertions.assertSame(cause,
                org.junit.jupiter.api.Assertions.assertThrows(java.util.concurrent.ExecutionException.class, a::get)
                        .getCause(), "with the fence's own error");
        // the late completion of the other lane's flush is ignored
        kit.run(new LaneProtocol.LaneFlushed(1, l1.id, l1.flushTokens.get(0)));
        settle(kit);
        assertFalse(kit.selfInbox().hasMessages());
        // the epoch did not advance: the next request of the same epoch needs a strong fence again
        facade.put(ByteBuffer.allocate(3), key.baseAddress(), key);
        settle(kit);
        assertEquals(2, l0.flushTokens.size(), "a new strong fence");
        assertEquals(2, channel.counters().get(EndpointCounters.Counter.STRONG_FENCES));
        kit.run(new LaneProtocol.LaneFlushed(0, l0.id, l0.flushTokens.get(1)));
        kit.run(new LaneProtocol.LaneFlushed(1, l1.id, l1.flushTokens.get(1)));
        settle(kit);
        assertEquals("PUT:3", l0.events.get(l0.events.size() - 1));
    }

    @Test
    void aFlushOfAnEndpointThatSentNothingTouchesNoTransport() {
        RecordingLane l0 = shortLane();
        RecordingLane l1 = bulkLane();
        BehaviorTestKit<EndpointProtocol.Command> kit = spawn("endpoint", l0, l1);
        CompletableFuture<Void> f = facade.flush().toCompletableFuture();
        settle(kit);
        assertTrue(f.isDone() && !f.isCompletedExceptionally());
        assertEquals(List.of(), l0.events);
        assertEquals(List.of(), l1.events);
    }

    @Test
    void replacingALaneDuringASelectiveStrongFenceReplaysDataThenFencesEveryLiveLane() {
        RecordingLane l0 = shortLane();
        RecordingLane l1 = bulkLane();
        BehaviorTestKit<EndpointProtocol.Command> kit = spawn("endpoint", l0, l1);
        CompletableFuture<Void> before = facade.put(ByteBuffer.allocate(8), key.baseAddress(), key)
                .toCompletableFuture();
        facade.fence();
        CompletableFuture<Void> after = facade.put(ByteBuffer.allocate(1 << 16), key.baseAddress(), key)
                .toCompletableFuture();
        settle(kit);
        assertEquals(List.of("PUT:8", "flush"), l0.events, "a selective fence: lane 0 only");
        assertEquals(List.of(), l1.events);

        RecordingLane l0b = new RecordingLane(3, l0.types);
        kit.run(new LaneProtocol.LaneReplaced(0, l0.id, l0b));
        assertEquals(List.of("PUT:8"), l0b.events, "the restarted put goes out during the replay, no flush yet");
        settle(kit); // ReplayDone
        assertEquals(List.of("PUT:8", "flush"), l0b.events, "then the restarted fence, after the data");
        assertEquals(List.of("flush"), l1.events, "the restarted fence covers every live lane");
        assertTrue(l0.events.contains("close"));
        assertEquals(1, channel.counters().get(EndpointCounters.Counter.RESTARTS));
        // the same sequence number goes out again, so the target can deduplicate
        assertEquals(l0.ops.get(0).sequence(), l0b.ops.get(0).sequence());
        assertFalse(l0.ops.get(0).mayHaveApplied(), "the first copy has none before it");
        assertTrue(l0b.ops.get(0).mayHaveApplied(), "the copy sent again is marked: the first may still apply"
                + " (its lane's revocation said so), so the lane must let the target's window see it");
        // a late completion from the old connection changes nothing
        kit.run(new LaneProtocol.OpCompleted(0, l0.id, l0.ops.get(0).token(), 0));
        assertFalse(before.isDone());
        kit.run(new LaneProtocol.LaneFlushed(0, l0.id, l0.flushTokens.get(0)));
        kit.run(new LaneProtocol.LaneFlushed(0, l0b.id, l0b.flushTokens.get(0)));
        settle(kit);
        assertTrue(l1.events.size() == 1, "one lane flushed is not enough");
        kit.run(new LaneProtocol.LaneFlushed(1, l1.id, l1.flushTokens.get(0)));
        settle(kit);
        assertEquals("PUT:65536", l1.events.get(l1.events.size() - 1), "released after the restarted fence");
        kit.run(new LaneProtocol.OpCompleted(0, l0b.id, l0b.ops.get(0).token(), 0));
        assertTrue(before.isDone());
        assertFalse(after.isDone());
    }

    @Test
    void aUserFlushKeepsItsCompletionsAndFlushesEveryLiveLaneAgainAfterAReplacement() {
        RecordingLane l0 = shortLane();
        RecordingLane l1 = bulkLane();
        BehaviorTestKit<EndpointProtocol.Command> kit = spawn("endpoint", l0, l1);
        workOnBothLanes();
        CompletableFuture<Void> flush = facade.flush().toCompletableFuture();
        settle(kit);
        kit.run(new LaneProtocol.OpCompleted(0, l0.id, l0.ops.get(0).token(), 0));
        kit.run(new LaneProtocol.LaneFlushed(0, l0.id, l0.flushTokens.get(0))); // lane 0's completion, kept
        RecordingLane l1b = new RecordingLane(4, l1.types);
        kit.run(new LaneProtocol.LaneReplaced(1, l1.id, l1b));
        settle(kit);
        assertEquals(List.of("PUT:65536", "flush"), l1b.events, "restarted data, then the flush again");
        assertEquals(List.of("PUT:8", "flush", "flush"), l0.events, "every live lane is flushed again");
        kit.run(new LaneProtocol.OpCompleted(1, l1b.id, l1b.ops.get(0).token(), 0));
        kit.run(new LaneProtocol.LaneFlushed(1, l1b.id, l1b.flushTokens.get(0)));
        assertFalse(flush.isDone(), "lane 0's second flush is outstanding");
        kit.run(new LaneProtocol.LaneFlushed(0, l0.id, l0.flushTokens.get(1)));
        assertTrue(flush.isDone() && !flush.isCompletedExceptionally());
    }

    @Test
    void failoverPreservesTheFenceQueueAndTheRequestsEpochs() {
        RecordingLane l0 = shortLane();
        RecordingLane l1 = bulkLane();
        RecordingLane l2 = new RecordingLane(5, Set.of(LaneType.AM, LaneType.RMA, LaneType.RMA_BW));
        BehaviorTestKit<EndpointProtocol.Command> kit = spawn("endpoint", l0, l1, l2);
        facade.put(ByteBuffer.allocate(8), key.baseAddress(), key); // lane 0
        facade.put(ByteBuffer.allocate(1 << 16), key.baseAddress(), key); // lane 1
        facade.fence();
        CompletableFuture<Void> queued = facade.put(ByteBuffer.allocate(4), key.baseAddress(), key)
                .toCompletableFuture();
        settle(kit);
        assertEquals(1, channel.counters().get(EndpointCounters.Counter.FENCE_QUEUED));
        kit.run(new LaneProtocol.LaneFailed(1, l1.id, new RuntimeException("link down")));
        settle(kit);
        assertFalse(queued.isDone(), "a lane failure in failover mode does not purge the fence queue");
        assertEquals(List.of("PUT:65536", "flush"), l2.events.stream().filter(e -> !e.equals("fence")).toList(),
                "the bulk put restarted on lane 2, then the restarted fence");
        // complete the restarted fence on every live lane: the queued request is released
        kit.run(new LaneProtocol.LaneFlushed(0, l0.id, l0.flushTokens.get(l0.flushTokens.size() - 1)));
        kit.run(new LaneProtocol.LaneFlushed(2, l2.id, l2.flushTokens.get(l2.flushTokens.size() - 1)));
        settle(kit);
        assertTrue(l0.events.contains("PUT:4") || l2.events.contains("PUT:4"), l0.events + " " + l2.events);
        assertFalse(l1.events.contains("PUT:4"));
    }

    @Test
    void inFailoverModeAFailedFenceFlushIsALaneFailureAndTheQueueSurvives() {
        RecordingLane l0 = shortLane();
        RecordingLane l1 = bulkLane();
        RecordingLane l2 = new RecordingLane(6, Set.of(LaneType.AM, LaneType.RMA, LaneType.RMA_BW));
        BehaviorTestKit<EndpointProtocol.Command> kit = spawn("endpoint", l0, l1, l2);
        workOnBothLanes();
        facade.fence();
        CompletableFuture<Void> queued = facade.put(ByteBuffer.allocate(3), key.baseAddress(), key)
                .toCompletableFuture();
        settle(kit);
        kit.run(new LaneProtocol.LaneFlushFailed(0, l0.id, l0.flushTokens.get(0),
                new RemoteAccessException(RemoteAccessException.Reason.REGION_CLOSED, "flush failed")));
        settle(kit);
        assertFalse(queued.isDone(), "invisible to the user");
        assertTrue(l0.events.contains("close"), "lane 0 was failed over");
        assertEquals(java.util.List.of(false, true, true), channel.lanes().stream().map(l -> l.live()).toList());
    }

    @Test
    void aRequestWithAFailedFragmentCompletesOnlyWhenEveryFragmentIsBack() {
        RecordingLane l0 = shortLane();
        RecordingLane l1 = bulkLane();
        BehaviorTestKit<EndpointProtocol.Command> kit = spawn("endpoint", l0, l1);
        CompletableFuture<Void> big = facade.put(ByteBuffer.allocate(4 << 16), key.baseAddress(), key)
                .toCompletableFuture();
        settle(kit);
        assertEquals(4, l1.ops.size());
        kit.run(new LaneProtocol.OpFailed(1, l1.id, l1.ops.get(0).token(),
                new RemoteAccessException(RemoteAccessException.Reason.REGION_CLOSED, "closed")));
        assertFalse(big.isDone(), "three fragments still use the buffer");
        for (int i = 1; i < 4; i++) {
            kit.run(new LaneProtocol.OpCompleted(1, l1.id, l1.ops.get(i).token(), 0));
        }
        assertTrue(big.isCompletedExceptionally(), "then it fails with the fragment's error");
        assertEquals(1, channel.counters().get(EndpointCounters.Counter.FAILED));
    }

    @Test
    void anAddedLaneTakesANewSlotAndTheOthersStay() {
        RecordingLane l0 = shortLane();
        RecordingLane l1 = bulkLane();
        BehaviorTestKit<EndpointProtocol.Command> kit = spawn("endpoint", l0, l1);
        RecordingLane l3 = new RecordingLane(7, Set.of(LaneType.RMA_BW));
        kit.run(new LaneProtocol.LaneAdded(l3));
        settle(kit);
        assertEquals(3, channel.lanes().size());
        assertEquals(l3.id, channel.lanes().get(2).connectionId(), "the new lane sits in the new slot");
        assertEquals(List.of(l0.id, l1.id), channel.lanes().subList(0, 2).stream().map(l -> l.connectionId()).toList());
        assertFalse(l0.events.contains("close") || l1.events.contains("close"), "both stay in the table");
        assertEquals(1, channel.counters().get(EndpointCounters.Counter.RECONFIGURATIONS));
    }

    @Test
    void fenceOnOneLaneIsWeak() {
        RecordingLane l0 = shortLane();
        BehaviorTestKit<EndpointProtocol.Command> kit = spawn("endpoint", l0);
        facade.put(ByteBuffer.allocate(8), key.baseAddress(), key);
        facade.fence();
        facade.atomicPost64(AtomicOp.ADD, key.baseAddress(), key, 1);
        settle(kit);
        assertEquals(List.of("PUT:8", "fence", "ATOMIC_POST:8"), l0.events);
        assertEquals(1, channel.counters().get(EndpointCounters.Counter.WEAK_FENCES));
        assertEquals(0, channel.counters().get(EndpointCounters.Counter.STRONG_FENCES));
    }

    @Test
    void fenceWithNothingBeforeItFastForwards() {
        RecordingLane l0 = shortLane();
        RecordingLane l1 = bulkLane();
        BehaviorTestKit<EndpointProtocol.Command> kit = spawn("endpoint", l0, l1);
        facade.fence();
        workerEpoch.incrementAndGet();
        facade.put(ByteBuffer.allocate(8), key.baseAddress(), key);
        settle(kit);
        assertEquals(List.of("PUT:8"), l0.events);
        assertEquals(1, channel.counters().get(EndpointCounters.Counter.FAST_FORWARDS));
    }

    @Test
    void flushWaitsForQueuedWorkIssuedBeforeItButNotForLaterWork() {
        RecordingLane l0 = shortLane();
        RecordingLane l1 = bulkLane();
        BehaviorTestKit<EndpointProtocol.Command> kit = spawn("endpoint", l0, l1);
        workOnBothLanes();
        facade.fence();
        facade.put(ByteBuffer.allocate(1), key.baseAddress(), key); // queued behind a strong fence
        CompletableFuture<Void> flush = facade.flush().toCompletableFuture();
        settle(kit);
        assertEquals(List.of("PUT:8", "flush"), l0.events, "the user flush does not start before the queued put");
        kit.run(new LaneProtocol.LaneFlushed(0, l0.id, l0.flushTokens.get(0)));
        kit.run(new LaneProtocol.LaneFlushed(1, l1.id, l1.flushTokens.get(0)));
        settle(kit);
        assertEquals(List.of("PUT:8", "flush", "PUT:1", "flush"), l0.events);
        // complete every op and both lane flushes of the user flush
        for (RecordingLane l : List.of(l0, l1)) {
            for (TransportOp op : l.ops) {
                kit.run(new LaneProtocol.OpCompleted(l == l0 ? 0 : 1, l.id, op.token(), 0));
            }
        }
        assertFalse(flush.isDone(), "lane flushes still outstanding");
        kit.run(new LaneProtocol.LaneFlushed(0, l0.id, l0.flushTokens.get(1)));
        kit.run(new LaneProtocol.LaneFlushed(1, l1.id, l1.flushTokens.get(1)));
        assertTrue(flush.isDone());
        assertFalse(flush.isCompletedExceptionally());
    }

    @Test
    void noResourceParksOperationsInOrderUntilTheLaneIsReady() {
        RecordingLane l0 = shortLane();
        BehaviorTestKit<EndpointProtocol.Command> kit = spawn("endpoint", l0);
        l0.answer = PostStatus.NO_RESOURCE;
        facade.put(ByteBuffer.allocate(1), key.baseAddress(), key);
        facade.put(ByteBuffer.allocate(2), key.baseAddress(), key);
        settle(kit);
        assertEquals(List.of("busy"), l0.events, "the second waits behind the first without touching the lane");
        l0.answer = PostStatus.IN_PROGRESS;
        kit.run(new LaneProtocol.LaneReady(0, l0.id));
        assertEquals(List.of("busy", "PUT:1", "PUT:2"), l0.events);
    }

    @Test
    void targetErrorsFailOnlyTheirRequest() {
        RecordingLane l0 = shortLane();
        BehaviorTestKit<EndpointProtocol.Command> kit = spawn("endpoint", l0);
        CompletableFuture<Void> bad = facade.put(ByteBuffer.allocate(1), key.baseAddress(), key).toCompletableFuture();
        CompletableFuture<Void> good = facade.put(ByteBuffer.allocate(2), key.baseAddress(), key).toCompletableFuture();
        settle(kit);
        kit.run(new LaneProtocol.OpFailed(0, l0.id, l0.ops.get(0).token(),
                new RemoteAccessException(RemoteAccessException.Reason.UNKNOWN_KEY, "key 002a.. unknown")));
        kit.run(new LaneProtocol.OpCompleted(0, l0.id, l0.ops.get(1).token(), 0));
        assertTrue(bad.isCompletedExceptionally());
        assertTrue(good.isDone() && !good.isCompletedExceptionally());
        // a late completion for the failed request is ignored, not completed twice
        kit.run(new LaneProtocol.OpCompleted(0, l0.id, l0.ops.get(0).token(), 0));
        assertEquals(1, channel.counters().get(EndpointCounters.Counter.FAILED));
        assertEquals(1, channel.counters().get(EndpointCounters.Counter.COMPLETED));
    }

    @Test
    void laneFailureFailsEveryOutstandingRequestAndLaterOnes() {
        RecordingLane l0 = shortLane();
        BehaviorTestKit<EndpointProtocol.Command> kit = spawn("endpoint", l0);
        CompletableFuture<Void> p = facade.put(ByteBuffer.allocate(1), key.baseAddress(), key).toCompletableFuture();
        settle(kit);
        kit.run(new LaneProtocol.LaneFailed(0, l0.id, new RuntimeException("cable pulled")));
        assertTrue(p.isCompletedExceptionally());
        CompletableFuture<Void> later = facade.put(ByteBuffer.allocate(1), key.baseAddress(), key).toCompletableFuture();
        assertTrue(later.isCompletedExceptionally(), "refused at the facade once the failure is published");
        assertTrue(l0.events.contains("close"));
    }

    /** What the end of an endpoint rejects from its queue counts as failed operations, its flushes not. */
    @Test
    void aFlushRejectedAtTheEndIsNoFailedOperation() {
        RecordingLane l0 = shortLane();
        BehaviorTestKit<EndpointProtocol.Command> kit = spawn("endpoint", l0);
        settle(kit);
        CompletableFuture<Void> put = facade.put(ByteBuffer.allocate(1), key.baseAddress(), key).toCompletableFuture();
        CompletableFuture<Void> flush = facade.flush().toCompletableFuture();
        assertFalse(put.isDone() || flush.isDone(), "both wait in the queue");
        kit.run(new LaneProtocol.LaneFailed(0, l0.id, new RuntimeException("cable pulled")));
        assertTrue(put.isCompletedExceptionally() && flush.isCompletedExceptionally());
        assertEquals(1, channel.counters().get(EndpointCounters.Counter.OPERATIONS), "the put, not the flush");
        assertEquals(1, channel.counters().get(EndpointCounters.Counter.FAILED));
    }

    @Test
    void weakModeRefusesAnEndpointWhoseRmaSpansTwoLanes() {
        ConfigurationException e = org.junit.jupiter.api.Assertions.assertThrows(ConfigurationException.class,
                () -> spawn("weak", shortLane(), bulkLane()));
        assertTrue(e.getMessage().contains("fenceline.fence.mode = weak"), e.getMessage());
        assertInstanceOf(ConfigurationException.class, e);
    }
}
