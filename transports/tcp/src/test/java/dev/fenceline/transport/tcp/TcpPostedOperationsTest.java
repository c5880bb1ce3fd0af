package dev.fenceline.transport.tcp;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.typesafe.config.ConfigFactory;
import dev.fenceline.AtomicOp;
import dev.fenceline.Endpoint;
import dev.fenceline.Fenceline;
import dev.fenceline.MemoryRegion;
import dev.fenceline.RemoteKey;
import dev.fenceline.Worker;
import dev.fenceline.WorkerAddress;
import dev.fenceline.spi.RequestTrace;
import dev.fenceline.testkit.PostedOperationChecks;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * The fast path by grant on tcp: a calling thread posts a short operation on the endpoint's lane
 * itself and the event loop that reads the answer completes it (and runs its callbacks, in order); when the lane fails with posted
 * operations unanswered, the endpoint takes them back and restarts them on the other rail, each
 * applied once (the target's exactly-once window recognizes copies that arrive late).
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class TcpPostedOperationsTest {
    @AfterAll
    static void noLeaks() throws InterruptedException {
        LeakGuard.assertNoLeaks();
    }

    private static <T> T await(CompletionStage<T> s) throws Exception {
        return s.toCompletableFuture().get(20, TimeUnit.SECONDS);
    }

    @Test
    void anIdleEndpointsCallerPostsItselfAndCallbacksRunInCompletionOrder() throws Exception {
        try (Fenceline f = Fenceline.create(TcpConfigs.loopback("127.0.0.1:0"))) {
            Worker a = f.newWorker("origin").toCompletableFuture().get(10, TimeUnit.SECONDS);
            Worker b = f.newWorker("target").toCompletableFuture().get(10, TimeUnit.SECONDS);
            Endpoint ep = a.connect(b.address()).toCompletableFuture().get(10, TimeUnit.SECONDS);
            PostedOperationChecks.callersPostAndCallbacksRunInAnswerOrder(a, b, ep);
            await(ep.close());
        }
    }

    /**
     * Rail 0 (the one callers post on) stops answering while a window of fetch-adds is posted on it;
     * keepalive gives it up, the endpoint takes the fetch-adds back and restarts them on rail 1, and
     * the held bytes reach the target afterwards: every fetch-add is applied exactly once.
     */
    @Test
    void postedOperationsOnARailThatStopsAreRestartedOnTheOtherRailAndAppliedOnce() throws Exception {
        int window = 64;
        try (Fenceline f = twoRails()) {
            Worker a = f.newWorker("origin").toCompletableFuture().get(10, TimeUnit.SECONDS);
            Worker b = f.newWorker("target").toCompletableFuture().get(10, TimeUnit.SECONDS);
            MemoryRegion region = b.allocate(4096);
            List<InetSocketAddress> rails = TcpAddress.decode(b.address().transportAddress("tcp"));
            try (LoopbackProxy relay = new LoopbackProxy("127.0.0.3", rails.get(0))) {
                WorkerAddress viaRelay = Lanes.through(b, relay.address(), rails.get(1));
                Endpoint ep = a.connect(viaRelay).toCompletableFuture().get(10, TimeUnit.SECONDS);
                assertEquals(2, ep.lanes().size(), ep.lanes().toString());
                RemoteKey key = a.unpackRemoteKey(region.remoteKey().toBytes());
                long counter = region.address();
                await(ep.flush());
                long before = PostedOperationChecks.untilPosted(ep, counter, key, 0);

                relay.hold(); // rail 0 looks alive and answers nothing
                PostedOperationChecks.Trace trace = new PostedOperationChecks.Trace();
                List<CompletableFuture<Long>> posted = PostedOperationChecks.fetchAddWindow(ep, counter, key, window,
                        trace);
                PostedOperationChecks.fetchedOnceEach(posted, before);
                assertTrue(trace.events().size() == 2 && trace.events().get(0).startsWith("admitted -1 #")
                        && trace.events().get(1).startsWith("admitted 1 #")
                        && trace.events().get(0).substring(trace.events().get(0).indexOf('#'))
                                .equals(trace.events().get(1).substring(trace.events().get(1).indexOf('#'))),
                        "posted on rail 0, then restarted on rail 1 under the same number: " + trace.events());
                relay.release(); // the held copies reach the target now: recognized, not applied again
                Lanes.awaitLaneZero(ep, l -> l.live(), "rail 0 to come back");
                await(ep.flush());
                assertEquals(before + window, await(ep.atomicFetch64(AtomicOp.ADD, counter, key, 0)),
                        "every fetch-add applied once");
                var stats = a.statistics();
                assertEquals(0, stats.failed(), stats.toString());
                assertEquals(0, stats.outstanding(), stats.toString());
                assertTrue(stats.restarts() >= window, "restarted on rail 1: " + stats);
                await(ep.close());
            }
        }
    }

    /** Two loopback rails; keepalive gives a silent one up within a second, and it reconnects. */
    private static Fenceline twoRails() {
        return Fenceline.create(ConfigFactory.parseString("""
                fenceline.endpoint.keepalive { interval = 100ms, timeout = 1s }
                fenceline.transport.tcp.connect-timeout = 1s
                fenceline.transport.tcp.reconnect { min-backoff = 20ms, max-backoff = 200ms }
                """).withFallback(TcpConfigs.loopback("127.0.0.1:0", "127.0.0.2:0")));
    }

    /**
     * A get posted by the caller on rail 0, a fence, and a put to the same bytes: the put is not
     * posted behind the unanswered get (docs/fences.md, reads before a fence). Rail 0 then answers
     * nothing; keepalive gives it up, the get is restarted on rail 1 and reads what was there before
     * the fence, and the put is applied after it. Posted behind the get, the put might have been
     * applied on rail 0 while the get's answer was lost, and the get could only end unknown.
     */
    @Test
    void aPutFencedAfterAPostedGetWaitsForItsAnswerAcrossARailThatStops() throws Exception {
        try (Fenceline f = twoRails()) {
            Worker a = f.newWorker("origin").toCompletableFuture().get(10, TimeUnit.SECONDS);
            Worker b = f.newWorker("target").toCompletableFuture().get(10, TimeUnit.SECONDS);
            MemoryRegion region = b.allocate(4096);
            List<InetSocketAddress> rails = TcpAddress.decode(b.address().transportAddress("tcp"));
            try (LoopbackProxy relay = new LoopbackProxy("127.0.0.3", rails.get(0))) {
                Endpoint ep = a.connect(Lanes.through(b, relay.address(), rails.get(1))).toCompletableFuture()
                        .get(10, TimeUnit.SECONDS);
                RemoteKey key = a.unpackRemoteKey(region.remoteKey().toBytes());
                long at = region.address() + 512;
                ByteBuffer before = filled(1);
                ByteBuffer after = filled(2);
                await(ep.put(before, at, key));
                await(ep.flush());
                PostedOperationChecks.untilPosted(ep, region.address(), key, 0); // the grant is on rail 0

                relay.hold();
                PostedOperationChecks.Trace getTrace = new PostedOperationChecks.Trace();
                PostedOperationChecks.Trace putTrace = new PostedOperationChecks.Trace();
                ByteBuffer read = ByteBuffer.allocateDirect(64);
                CompletableFuture<Void> get = RequestTrace.during(getTrace, () -> ep.get(read, at, key))
                        .toCompletableFuture();
                ep.fence();
                CompletableFuture<Void> put = RequestTrace.during(putTrace, () -> ep.put(after, at, key))
                        .toCompletableFuture();
                assertTrue(getTrace.postedByCaller(), "the get was posted on rail 0: " + getTrace.events());
                await(get);
                assertEquals(before, read, "the get reads what was there before the fence");
                await(put);
                assertTrue(putTrace.events().size() == 1 && putTrace.events().get(0).startsWith("admitted 1 #"),
                        "the put was not posted behind the get, but sent by the actor on rail 1: " + putTrace.events());
                assertTrue(getTrace.events().size() == 2 && getTrace.events().get(1).startsWith("admitted 1 #"),
                        "the get was restarted on rail 1: " + getTrace.events());
                relay.release();
                Lanes.awaitLaneZero(ep, l -> l.live(), "rail 0 to come back");
                ByteBuffer now = ByteBuffer.allocateDirect(64);
                await(ep.get(now, at, key));
                assertEquals(after, now, "the put was applied");
                var stats = a.statistics();
                assertEquals(0, stats.failed(), stats.toString());
                assertEquals(0, stats.outstanding(), stats.toString());
                await(ep.close());
            }
        }
    }

    private static ByteBuffer filled(int value) {
        ByteBuffer b = ByteBuffer.allocateDirect(64);
        for (int i = 0; i < 64; i++) {
            b.put(i, (byte) value);
        }
        return b;
    }

    /**
     * Several threads share one endpoint: each runs a seeded random mix of fetch-adds on one counter
     * (posted while the grant holds), puts too large to post (through the actor, which waits for
     * every posted operation first) and flushes. Every fetch-add is applied once and fetches a
     * distinct value; every flush covers its thread's puts. The seed is printed.
     */
    @Test
    void threadsPostingAndSubmittingAtOnceKeepEveryOperationOnce() throws Exception {
        long seed = Long.getLong("fenceline.test.seed", 20261202L);
        System.out.printf("TcpPostedOperationsTest threads seed %d: reproduce with"
                + " -Dtest=TcpPostedOperationsTest -Dfenceline.test.seed=%d%n", seed, seed);
        try (Fenceline f = Fenceline.create(TcpConfigs.loopback("127.0.0.1:0"))) {
            Worker a = f.newWorker("origin").toCompletableFuture().get(10, TimeUnit.SECONDS);
            Worker b = f.newWorker("target").toCompletableFuture().get(10, TimeUnit.SECONDS);
            Endpoint ep = a.connect(b.address()).toCompletableFuture().get(10, TimeUnit.SECONDS);
            PostedOperationChecks.threadsPostingAndSubmittingKeepEveryOperationOnce(a, b, ep, seed, 4, 1500);
            await(ep.close());
        }
    }

    /** busy-poll only changes how the event loops wait: the same operations, the same answers. */
    @Test
    void busyPollingEventLoopsServeTheSameOperations() throws Exception {
        org.junit.jupiter.api.Assumptions.assumeTrue(io.netty.channel.epoll.Epoll.isAvailable(), "needs native epoll");
        try (Fenceline f = Fenceline.create(ConfigFactory.parseString("fenceline.transport.tcp.busy-poll = on")
                .withFallback(TcpConfigs.loopback("127.0.0.1:0")))) {
            Worker a = f.newWorker("origin").toCompletableFuture().get(10, TimeUnit.SECONDS);
            Worker b = f.newWorker("target").toCompletableFuture().get(10, TimeUnit.SECONDS);
            MemoryRegion region = b.allocate(4096);
            Endpoint ep = a.connect(b.address()).toCompletableFuture().get(10, TimeUnit.SECONDS);
            RemoteKey key = a.unpackRemoteKey(region.remoteKey().toBytes());
            for (long i = 0; i < 20; i++) {
                assertEquals(i, await(ep.atomicFetch64(AtomicOp.ADD, region.address(), key, 1)));
            }
            await(ep.close());
        }
    }

    /** A lane ends under posted operations with no other rail: their outcome is unknown, never "not applied". */
    @Test
    void postedOperationsOnALastLaneThatFailsEndUnknown() throws Exception {
        try (Fenceline f = Fenceline.create(ConfigFactory.parseString("""
                fenceline.endpoint.keepalive { interval = 100ms, timeout = 1s }
                fenceline.transport.tcp.connect-timeout = 1s
                """).withFallback(TcpConfigs.loopback("127.0.0.1:0")))) {
            Worker a = f.newWorker("origin").toCompletableFuture().get(10, TimeUnit.SECONDS);
            Worker b = f.newWorker("target").toCompletableFuture().get(10, TimeUnit.SECONDS);
            MemoryRegion region = b.allocate(4096);
            List<InetSocketAddress> rails = TcpAddress.decode(b.address().transportAddress("tcp"));
            try (LoopbackProxy relay = new LoopbackProxy("127.0.0.3", rails.get(0))) {
                WorkerAddress viaRelay = Lanes.through(b, relay.address());
                Endpoint ep = a.connect(viaRelay).toCompletableFuture().get(10, TimeUnit.SECONDS);
                RemoteKey key = a.unpackRemoteKey(region.remoteKey().toBytes());
                await(ep.flush());
                relay.blackHole();
                CompletableFuture<Long> lost = ep.atomicFetch64(AtomicOp.ADD, region.address(), key, 1)
                        .toCompletableFuture();
                ExecutionException e = assertThrows(ExecutionException.class,
                        () -> lost.get(20, TimeUnit.SECONDS));
                assertInstanceOf(dev.fenceline.OutcomeUnknownException.class, e.getCause(), e.toString());
            }
        }
    }

}
