package dev.fenceline.transport.ucx;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.typesafe.config.Config;
import com.typesafe.config.ConfigFactory;
import dev.fenceline.AtomicOp;
import dev.fenceline.Endpoint;
import dev.fenceline.EndpointFailedException;
import dev.fenceline.Fenceline;
import dev.fenceline.LaneInfo;
import dev.fenceline.MemoryRegion;
import dev.fenceline.RemoteKey;
import dev.fenceline.Worker;
import dev.fenceline.testkit.PostedOperationChecks;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * The fast path by grant on a UCT tcp lane, whose every operation is a software request: a calling
 * thread posts a short operation itself (queued for the progress agent without the endpoint actor)
 * and the agent completes it when the target answers, callbacks in answer order; when the lane's
 * channel fails with posted operations unanswered, the endpoint takes them back and restarts them on
 * its tcp lane under the same numbers, each applied once; and threads posting and submitting at once
 * (seeded, printed) keep every fetch-add once.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class UcxPostedOperationsTest {
    private static final String SECRET = "0123456789abcdef0123456789abcdef";

    @BeforeAll
    static void ucx() {
        UcxAssumptions.ucxAvailable();
    }

    private static Config uctTcp() {
        return ConfigFactory.parseString("""
                fenceline.transports = [ucx]
                fenceline.transport.ucx.tls = [tcp]
                fenceline.transport.ucx.devices = [lo]
                fenceline.transport.ucx.tcp-unchecked-writes = accept
                """);
    }

    private static <T> T await(CompletionStage<T> s) throws Exception {
        return s.toCompletableFuture().get(20, TimeUnit.SECONDS);
    }

    @Test
    void anIdleEndpointsCallerPostsItselfAndCallbacksRunInAnswerOrder() throws Exception {
        try (Fenceline f = Fenceline.create(uctTcp())) {
            Worker a = await(f.newWorker("origin"));
            Worker b = await(f.newWorker("target"));
            Endpoint ep = await(a.connect(b.address()));
            UcxLane lane = UcxLane.byId(ep.lanes().get(0).connectionId());
            assertNotNull(lane, "a UCT lane: " + ep.lanes());
            assertTrue(lane.postsDirectly(), lane + " takes posted operations (UCT tcp: software requests only)");
            PostedOperationChecks.callersPostAndCallbacksRunInAnswerOrder(a, b, ep);
            await(ep.close());
        }
    }

    /**
     * An endpoint to a region of 64 KiB on another worker, with its grant: implicit puts and flushes
     * until one is posted by the caller (the grant comes once the endpoint is idle).
     */
    private record Posting(Endpoint ep, MemoryRegion region, RemoteKey key) {
        static Posting start(Fenceline f) throws Exception {
            Worker a = await(f.newWorker("origin"));
            Worker b = await(f.newWorker("target"));
            MemoryRegion region = b.allocate(1 << 16);
            Endpoint ep = await(a.connect(b.address()));
            RemoteKey key = a.unpackRemoteKey(region.remoteKey().toBytes());
            long posted = ep.statistics().fastPath();
            for (int sent = 0; ep.statistics().fastPath() == posted; sent++) {
                assertTrue(sent < 1000, "no grant after " + sent + " puts: " + ep.statistics());
                ep.putImplicit(java.nio.ByteBuffer.allocate(8), region.address(), key);
                await(ep.flush());
            }
            return new Posting(ep, region, key);
        }
    }

    /**
     * Implicit puts a caller posts itself: the target holds their answers back (here for up to a
     * second) when more follow, and a flush asks for them and completes at once; every put lands.
     */
    @Test
    void aFlushGetsTheAnswersToImplicitPostsTheTargetHoldsAtOnce() throws Exception {
        try (Fenceline f = Fenceline.create(ConfigFactory.parseString(
                "fenceline.transport.ucx.answer-hold = 1s").withFallback(uctTcp()))) {
            Posting posting = Posting.start(f);
            Endpoint ep = posting.ep();
            MemoryRegion region = posting.region();
            RemoteKey key = posting.key();
            long value = 0;
            for (int n : new int[] {1, 5, 40, 64}) {
                long posted = ep.statistics().fastPath();
                for (int i = 0; i < n; i++) {
                    ep.putImplicit(java.nio.ByteBuffer.allocate(8).order(java.nio.ByteOrder.nativeOrder())
                            .putLong(0, ++value), region.address() + 8L * i, key);
                }
                long start = System.nanoTime();
                await(ep.flush());
                long ms = (System.nanoTime() - start) / 1_000_000;
                assertTrue(ep.statistics().fastPath() > posted, "posted by the caller: " + ep.statistics());
                // Without the flush's request the held answers would come at the end of the hold (1 s).
                assertTrue(ms < 500, n + " put(s): the flush took " + ms + " ms");
                java.nio.ByteBuffer mem = region.buffer().order(java.nio.ByteOrder.nativeOrder());
                for (int i = 0; i < n; i++) {
                    assertEquals(value - n + 1 + i, mem.getLong(8 * i), "put " + i + " of " + n);
                }
            }
            await(ep.close());
        }
    }

    /**
     * A put too large to post goes to the endpoint actor, which waits for the implicit puts posted
     * before it: it asks for the answers the target holds (here for up to a second) rather than wait.
     */
    @Test
    void theActorWaitingForPostedOperationsAsksForTheirHeldAnswers() throws Exception {
        try (Fenceline f = Fenceline.create(ConfigFactory.parseString(
                "fenceline.transport.ucx.answer-hold = 1s").withFallback(uctTcp()))) {
            Posting posting = Posting.start(f);
            Endpoint ep = posting.ep();
            MemoryRegion region = posting.region();
            RemoteKey key = posting.key();
            for (int round = 0; round < 3; round++) {
                for (int i = 0; i < 5; i++) {
                    ep.putImplicit(java.nio.ByteBuffer.allocate(8), region.address() + 8L * i, key);
                }
                long start = System.nanoTime();
                await(ep.put(java.nio.ByteBuffer.allocate(8 << 10), region.address() + 1024, key)); // the actor's
                await(ep.flush());
                long ms = (System.nanoTime() - start) / 1_000_000;
                assertTrue(ms < 500, "round " + round + ": the large put and the flush took " + ms + " ms");
            }
            await(ep.close());
        }
    }

    /** Off: every operation goes through the endpoint actor, with the same answers. */
    @Test
    void withDirectOperationsOffTheActorPostsEverything() throws Exception {
        try (Fenceline f = Fenceline.create(ConfigFactory.parseString(
                "fenceline.transport.ucx.direct-operations = off").withFallback(uctTcp()))) {
            Worker a = await(f.newWorker("origin"));
            Worker b = await(f.newWorker("target"));
            MemoryRegion region = b.allocate(4096);
            Endpoint ep = await(a.connect(b.address()));
            RemoteKey key = a.unpackRemoteKey(region.remoteKey().toBytes());
            await(ep.flush());
            for (long i = 0; i < 50; i++) {
                assertEquals(i, await(ep.atomicFetch64(AtomicOp.ADD, region.address(), key, 1)));
            }
            assertEquals(0, ep.statistics().fastPath(), ep.statistics().toString());
            await(ep.close());
        }
    }

    /**
     * The UCT lane's channel fails (as when UCT reports its peer failed) while a window of fetch-adds
     * is posted on it: the endpoint takes them back and restarts them on its tcp lane under the same
     * numbers. Copies the UCT lane had sent were applied (the channel did not really break), and the
     * window both transports share recognizes the ones sent again: every fetch-add is applied once.
     */
    @Test
    void postedOperationsOnAFailedUctLaneAreRestartedOnTheTcpLaneAndAppliedOnce() throws Exception {
        int window = 64;
        try (Fenceline f = Fenceline.create(ConfigFactory.parseString("""
                fenceline.transports = [ucx, tcp]
                fenceline.endpoint.lane-transports = all
                fenceline.transport.ucx.tls = [tcp]
                fenceline.transport.ucx.devices = [lo]
                fenceline.transport.ucx.tcp-unchecked-writes = accept
                fenceline.transport.tcp.listen = ["127.0.0.1:0"]
                fenceline.transport.tcp.secret = "%s"
                """.formatted(SECRET)))) {
            Worker a = await(f.newWorker("origin"));
            Worker b = await(f.newWorker("target"));
            MemoryRegion region = b.allocate(4096);
            RemoteKey key = a.unpackRemoteKey(region.remoteKey().toBytes());
            long counter = region.address();
            Endpoint ep = await(a.connect(b.address()));
            assertEquals(List.of("ucx", "tcp"), ep.lanes().stream().map(LaneInfo::transport).toList(),
                    ep.lanes().toString());
            await(ep.flush());
            long before = PostedOperationChecks.untilPosted(ep, counter, key, 0);
            UcxLane uct = UcxLane.byId(ep.lanes().get(0).connectionId());
            assertNotNull(uct, "the UCT lane is live");

            PostedOperationChecks.Trace trace = new PostedOperationChecks.Trace();
            List<CompletableFuture<Long>> posted = PostedOperationChecks.fetchAddWindow(ep, counter, key, window,
                    trace);
            uct.breakChannel(new EndpointFailedException("test: UCT reported the peer failed"));
            PostedOperationChecks.fetchedOnceEach(posted, before);
            assertTrue(trace.events().get(0).startsWith("admitted -1 #"), "posted by the caller: " + trace.events());
            await(ep.flush());
            assertEquals(before + window, await(ep.atomicFetch64(AtomicOp.ADD, counter, key, 0)),
                    "every fetch-add applied once");
            var stats = a.statistics();
            assertEquals(0, stats.failed(), stats.toString());
            assertEquals(0, stats.outstanding(), stats.toString());
            await(ep.close());
        }
    }

    /**
     * Several threads share one endpoint over UCT tcp: each runs a seeded random mix of fetch-adds on
     * one counter (posted while the grant holds), puts too large to post (through the actor, which
     * waits for every posted operation first) and flushes. Every fetch-add is applied once and fetches
     * a distinct value; every flush covers its thread's puts. The seed is printed.
     */
    @Test
    void threadsPostingAndSubmittingAtOnceKeepEveryOperationOnce() throws Exception {
        long seed = Long.getLong("fenceline.test.seed", 20261203L);
        System.out.printf("UcxPostedOperationsTest threads seed %d: reproduce with"
                + " -Dtest=UcxPostedOperationsTest -Dfenceline.test.seed=%d%n", seed, seed);
        try (Fenceline f = Fenceline.create(uctTcp())) {
            Worker a = await(f.newWorker("origin"));
            Worker b = await(f.newWorker("target"));
            Endpoint ep = await(a.connect(b.address()));
            PostedOperationChecks.threadsPostingAndSubmittingKeepEveryOperationOnce(a, b, ep, seed, 4, 1000);
            await(ep.close());
        }
    }
}
