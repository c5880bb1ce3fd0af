package dev.fenceline.transport.ucx;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.typesafe.config.Config;
import com.typesafe.config.ConfigFactory;
import dev.fenceline.AtomicOp;
import dev.fenceline.Endpoint;
import dev.fenceline.EndpointFailedException;
import dev.fenceline.Fenceline;
import dev.fenceline.LaneInfo;
import dev.fenceline.MemoryRegion;
import dev.fenceline.RemoteAccessException;
import dev.fenceline.RemoteKey;
import dev.fenceline.Worker;
import dev.fenceline.spi.RequestTrace;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutionException;
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
                """);
    }

    private static <T> T await(CompletionStage<T> s) throws Exception {
        return s.toCompletableFuture().get(20, TimeUnit.SECONDS);
    }

    /** Records what the endpoint did with one request. */
    private static final class Trace implements RequestTrace {
        final List<String> events = new CopyOnWriteArrayList<>();

        @Override
        public void admitted(int lane, long sequence, boolean deduplicated, boolean visibilityReported) {
            events.add("admitted " + lane + " #" + sequence);
        }

        @Override
        public void visible(long sequence) {
            events.add("visible #" + sequence);
        }
    }

    /**
     * Fetch-adds one at a time until one is posted by the caller: the actor publishes the grant as it
     * goes idle, which may be a moment after the answer that made it idle.
     *
     * @param counter what the counter at {@code at} holds now
     * @return what it holds after
     */
    private static long untilPosted(Endpoint ep, long at, RemoteKey key, long counter) throws Exception {
        long next = counter;
        List<String> seen = new ArrayList<>();
        while (true) {
            Trace trace = new Trace();
            long now = next;
            CompletionStage<Long> call = RequestTrace.during(trace, () -> ep.atomicFetch64(AtomicOp.ADD, at, key, 1));
            assertEquals(now, await(call));
            next++;
            seen.add(trace.events.toString());
            if (trace.events.size() == 1 && trace.events.get(0).startsWith("admitted -1 #")) {
                return next;
            }
            assertTrue(next - counter < 50, "never posted by the caller: " + seen);
        }
    }

    @Test
    void anIdleEndpointsCallerPostsItselfAndCallbacksRunInAnswerOrder() throws Exception {
        try (Fenceline f = Fenceline.create(uctTcp())) {
            Worker a = await(f.newWorker("origin"));
            Worker b = await(f.newWorker("target"));
            MemoryRegion region = b.allocate(4096);
            Endpoint ep = await(a.connect(b.address()));
            RemoteKey key = a.unpackRemoteKey(region.remoteKey().toBytes());
            long base = region.address();
            UcxLane lane = UcxLane.byId(ep.lanes().get(0).connectionId());
            assertNotNull(lane, "a UCT lane: " + ep.lanes());
            assertTrue(lane.postsDirectly(), lane + " takes posted operations (UCT tcp: software requests only)");
            await(ep.flush()); // the actor is idle: it publishes the grant as it goes idle

            long next = untilPosted(ep, base, key, 0);
            for (long i = next; i < 200; i++) {
                assertEquals(i, await(ep.atomicFetch64(AtomicOp.ADD, base, key, 1)), "fetch-add " + i);
            }
            ByteBuffer src = ByteBuffer.allocateDirect(64);
            for (int i = 0; i < 64; i++) {
                src.put(i, (byte) (i + 1));
            }
            await(ep.put(src, base + 512, key));
            ep.putImplicit(src, base + 1024, key);
            await(ep.flush());
            ByteBuffer dst = ByteBuffer.allocateDirect(64);
            await(ep.get(dst, base + 1024, key));
            assertEquals(src, dst, "the implicit put, read back by a posted get");
            assertEquals(0, await(ep.compareAndSwap32(base + 8, key, 0, 2)));
            assertEquals(2, await(ep.compareAndSwap32(base + 8, key, 0, 3)), "not swapped: 2 is not 0");

            // Callbacks run in answer order (on the progress agent): an operation's before the
            // callback of a flush issued after it.
            List<String> order = new CopyOnWriteArrayList<>();
            ep.atomicFetch64(AtomicOp.ADD, base, key, 1).thenRun(() -> order.add("fetch-add"));
            await(ep.flush().thenRun(() -> order.add("flush")));
            assertEquals(List.of("fetch-add", "flush"), order);

            // A refusal at the target fails the call with a typed error; the endpoint serves on.
            MemoryRegion closed = b.allocate(4096);
            RemoteKey closedKey = a.unpackRemoteKey(closed.remoteKey().toBytes());
            await(ep.put(src, closed.address(), closedKey));
            closed.close();
            ExecutionException bad = assertThrows(ExecutionException.class,
                    () -> await(ep.atomicFetch64(AtomicOp.ADD, closed.address(), closedKey, 1)));
            RemoteAccessException refused = assertInstanceOf(RemoteAccessException.class, bad.getCause(),
                    bad.toString());
            assertEquals(RemoteAccessException.Reason.REGION_CLOSED, refused.reason());
            assertEquals(201L, await(ep.atomicFetch64(AtomicOp.ADD, base, key, 1)));
            var stats = ep.statistics();
            assertTrue(stats.fastPath() >= 200, "posted by callers: " + stats);
            assertEquals(0, stats.outstanding(), stats.toString());
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
            long before = untilPosted(ep, counter, key, 0);
            UcxLane uct = UcxLane.byId(ep.lanes().get(0).connectionId());
            assertNotNull(uct, "the UCT lane is live");

            Trace trace = new Trace();
            List<CompletableFuture<Long>> posted = new ArrayList<>();
            posted.add(RequestTrace.during(trace, () -> ep.atomicFetch64(AtomicOp.ADD, counter, key, 1))
                    .toCompletableFuture());
            for (int i = 1; i < window; i++) {
                posted.add(ep.atomicFetch64(AtomicOp.ADD, counter, key, 1).toCompletableFuture());
            }
            uct.breakChannel(new EndpointFailedException("test: UCT reported the peer failed"));
            Set<Long> seen = new HashSet<>();
            for (CompletableFuture<Long> p : posted) {
                long v = p.get(20, TimeUnit.SECONDS);
                assertTrue(v >= before && v < before + window, "fetched " + v);
                assertTrue(seen.add(v), "value " + v + " fetched twice: " + seen);
            }
            assertTrue(trace.events.get(0).startsWith("admitted -1 #"), "posted by the caller: " + trace.events);
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
        int threads = 4;
        int perThread = 1000;
        System.out.printf("UcxPostedOperationsTest threads seed %d: reproduce with"
                + " -Dtest=UcxPostedOperationsTest -Dfenceline.test.seed=%d%n", seed, seed);
        try (Fenceline f = Fenceline.create(uctTcp())) {
            Worker a = await(f.newWorker("origin"));
            Worker b = await(f.newWorker("target"));
            MemoryRegion region = b.allocate(threads * 8192L + 64);
            Endpoint ep = await(a.connect(b.address()));
            RemoteKey key = a.unpackRemoteKey(region.remoteKey().toBytes());
            long counter = region.address();
            List<CompletableFuture<List<Long>>> runs = new ArrayList<>();
            for (int t = 0; t < threads; t++) {
                int id = t;
                java.util.Random random = new java.util.Random(seed + t);
                runs.add(CompletableFuture.supplyAsync(() -> {
                    List<Long> fetched = new ArrayList<>();
                    List<CompletableFuture<Long>> pending = new ArrayList<>();
                    long slot = counter + 64 + id * 8192L;
                    ByteBuffer big = ByteBuffer.allocateDirect(4096).order(ByteOrder.nativeOrder());
                    try {
                        for (int i = 0; i < perThread; i++) {
                            if (random.nextInt(100) < 3) {
                                big.putLong(0, i);
                                await(ep.put(big, slot, key)); // too large to post: the actor's
                                await(ep.flush());
                                ByteBuffer back = ByteBuffer.allocateDirect(8).order(ByteOrder.nativeOrder());
                                await(ep.get(back, slot, key));
                                assertEquals(i, back.getLong(0), "thread " + id + " put " + i + " after its flush");
                            } else {
                                pending.add(ep.atomicFetch64(AtomicOp.ADD, counter, key, 1).toCompletableFuture());
                            }
                            if (pending.size() >= 1 + random.nextInt(16)) {
                                for (CompletableFuture<Long> w : pending) {
                                    fetched.add(w.get(20, TimeUnit.SECONDS));
                                }
                                pending.clear();
                            }
                        }
                        for (CompletableFuture<Long> w : pending) {
                            fetched.add(w.get(20, TimeUnit.SECONDS));
                        }
                    } catch (Exception e) {
                        throw new java.util.concurrent.CompletionException(e);
                    }
                    return fetched;
                }));
            }
            Set<Long> all = new HashSet<>();
            int total = 0;
            for (CompletableFuture<List<Long>> r : runs) {
                List<Long> fetched = r.get(90, TimeUnit.SECONDS);
                total += fetched.size();
                for (long v : fetched) {
                    assertTrue(all.add(v), "value " + v + " fetched twice (seed " + seed + ")");
                }
            }
            assertEquals(total, await(ep.atomicFetch64(AtomicOp.ADD, counter, key, 0)),
                    "every fetch-add applied once (seed " + seed + ")");
            for (long v = 0; v < total; v++) {
                assertTrue(all.contains(v), "value " + v + " never fetched (seed " + seed + ")");
            }
            var stats = ep.statistics();
            assertTrue(stats.fastPath() > 0, "some were posted by the callers: " + stats);
            assertEquals(0, stats.outstanding(), stats.toString());
            await(ep.close());
        }
    }
}
