package dev.fenceline.actor;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.typesafe.config.ConfigFactory;
import dev.fenceline.AtomicOp;
import dev.fenceline.ConfigurationException;
import dev.fenceline.EndpointFailedException;
import dev.fenceline.LaneType;
import dev.fenceline.OutcomeUnknownException;
import dev.fenceline.RemoteAccessException;
import dev.fenceline.RemoteKey;
import dev.fenceline.WorkerAddress;
import dev.fenceline.internal.FencelineSettings;
import dev.fenceline.spi.LaneConnection;
import dev.fenceline.spi.RecordingLane;
import dev.fenceline.spi.LaneListener;
import dev.fenceline.spi.PostStatus;
import dev.fenceline.spi.TransportOp;
import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicLong;
import org.apache.pekko.actor.testkit.typed.javadsl.BehaviorTestKit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import java.util.concurrent.TimeUnit;

/**
 * Tier 2: one endpoint actor driven one message at a time with {@link BehaviorTestKit}, over
 * recording lanes, so every transport call the fence engine makes is visible and ordered.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class EndpointActorTest {
    private final UUID peerId = UUID.randomUUID();
    private final WorkerAddress peer = new WorkerAddress(peerId, "peer", Map.of("recording", new byte[0]));
    private final RemoteKey key = new RemoteKey(peerId, 42, 0x10000, 1 << 24, java.util.Map.of());
    private final AtomicLong workerEpoch = new AtomicLong();
    private final EndpointChannel channel = new EndpointChannel("test", peer);
    private final EndpointImpl facade = new EndpointImpl(channel, workerEpoch, null, Duration.ofSeconds(1));

    private BehaviorTestKit<EndpointProtocol.Command> spawn(String mode, LaneConnection... lanes) {
        return spawn(mode, "failover", lanes);
    }

    private BehaviorTestKit<EndpointProtocol.Command> spawn(String mode, String errorMode, LaneConnection... lanes) {
        FencelineSettings s = FencelineSettings.fromConfig(ConfigFactory.parseString("fenceline.fence.mode = " + mode
                + "\nfenceline.endpoint.error-mode = " + errorMode).withFallback(ConfigFactory.defaultReference())
                .resolve());
        return BehaviorTestKit.create(EndpointActor.createConnected(s, channel, facade, List.of(lanes)));
    }

    /** An 8-byte put (short: lane 0) and a 64 KiB put (bulk: lane 1), both not awaited. */
    private void workOnBothLanes() {
        facade.put(ByteBuffer.allocate(8), key.baseAddress(), key);
        facade.put(ByteBuffer.allocate(1 << 16), key.baseAddress(), key);
    }

    /** Runs every message the actor sent itself (drains, fence completions) until none is left. */
    private static void settle(BehaviorTestKit<EndpointProtocol.Command> kit) {
        while (kit.selfInbox().hasMessages()) {
            kit.runOne();
        }
    }

    private static RecordingLane shortLane() {
        return new RecordingLane(1, Set.of(LaneType.AM, LaneType.RMA, LaneType.AMO));
    }

    private static RecordingLane bulkLane() {
        return new RecordingLane(2, Set.of(LaneType.RMA_BW));
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

    private static Throwable failure(CompletableFuture<?> f) {
        return org.junit.jupiter.api.Assertions.assertThrows(java.util.concurrent.ExecutionException.class,
                () -> f.get(1, TimeUnit.SECONDS)).getCause();
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

    /**
     * A replacement of the lane a weak fence rested on, during the strong fence after it: the
     * request the weak fence had let through is restarted into the fence queue, below the restarted
     * fence's epoch. A request issued after that fence, arriving as the fence completes, must not be
     * posted before it: it would overtake work fenced before it.
     */
    @Test
    void aRequestIssuedAfterARestartedFenceWaitsForWorkFencedBeforeItThatStillQueues() {
        RecordingLane l0 = shortLane();
        RecordingLane l1 = bulkLane();
        BehaviorTestKit<EndpointProtocol.Command> kit = spawn("endpoint", l0, l1);
        facade.put(ByteBuffer.allocate(8), key.baseAddress(), key); // P, epoch 0, lane 0
        facade.fence();
        facade.put(ByteBuffer.allocate(16), key.baseAddress(), key); // R, epoch 1: a weak fence on lane 0
        facade.fence();
        facade.put(ByteBuffer.allocate(1 << 16), key.baseAddress(), key); // B, epoch 2, lane 1: a strong fence
        settle(kit);
        assertEquals(List.of("PUT:8", "fence", "PUT:16", "flush"), l0.events);
        RecordingLane l0b = new RecordingLane(3, l0.types);
        kit.run(new LaneProtocol.LaneReplaced(0, l0.id, l0b));
        settle(kit); // the replay, then the restarted fence
        assertFalse(l0b.events.contains("PUT:16"), "R waits behind the restarted fence: " + l0b.events);
        facade.put(ByteBuffer.allocate(24), key.baseAddress(), key); // Y, epoch 2, lane 0: not drained yet
        kit.run(new LaneProtocol.LaneFlushed(0, l0b.id, l0b.flushTokens.get(l0b.flushTokens.size() - 1)));
        kit.run(new LaneProtocol.LaneFlushed(1, l1.id, l1.flushTokens.get(l1.flushTokens.size() - 1)));
        settle(kit);
        assertTrue(l0b.events.contains("PUT:16"), "R was released: " + l0b.events);
        assertTrue(l0b.events.indexOf("PUT:16") < l0b.events.indexOf("PUT:24") || !l0b.events.contains("PUT:24"),
                "Y, fenced after R, went out before it: " + l0b.events);
    }

    /**
     * A request restarted into the fence queue was judged against the lane it was to go out on; a
     * copy of it may still apply late on the connection it was first sent on. If that lane is
     * replaced again, by one of another exactly-once scope, before the request leaves the queue, it
     * must be judged again: sent there, a late first copy would apply too and nobody would know.
     */
    @Test
    void aRestartedRequestLeavingTheFenceQueueIsJudgedAgainstTheLaneItNowGoesOutOn() {
        RecordingLane l0 = shortLane();
        RecordingLane l1 = bulkLane();
        BehaviorTestKit<EndpointProtocol.Command> kit = spawn("endpoint", l0, l1);
        facade.put(ByteBuffer.allocate(8), key.baseAddress(), key); // P, epoch 0, lane 0
        facade.fence();
        CompletableFuture<Void> r = facade.put(ByteBuffer.allocate(16), key.baseAddress(), key)
                .toCompletableFuture(); // R, epoch 1: a weak fence on lane 0
        facade.fence();
        CompletableFuture<Void> b = facade.put(ByteBuffer.allocate(1 << 16), key.baseAddress(), key)
                .toCompletableFuture(); // B, epoch 2, lane 1: a strong fence
        settle(kit);
        RecordingLane l0b = new RecordingLane(3, l0.types);
        kit.run(new LaneProtocol.LaneReplaced(0, l0.id, l0b)); // R's copy on l0 may still apply
        settle(kit);
        assertEquals(List.of("PUT:8", "flush"), l0b.events, "P restarted, R queued: " + l0b.events);
        kit.run(new LaneProtocol.OpCompleted(0, l0b.id, l0b.ops.get(0).token(), 0)); // P is done
        RecordingLane l0c = new RecordingLane(4, l0.types).scope("another window");
        kit.run(new LaneProtocol.LaneReplaced(0, l0b.id, l0c));
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
