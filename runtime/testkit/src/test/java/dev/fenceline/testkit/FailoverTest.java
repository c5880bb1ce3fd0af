package dev.fenceline.testkit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.typesafe.config.ConfigFactory;
import dev.fenceline.AtomicOp;
import dev.fenceline.Endpoint;
import dev.fenceline.EndpointFailedException;
import dev.fenceline.Fenceline;
import dev.fenceline.LaneType;
import dev.fenceline.MemoryRegion;
import dev.fenceline.OutcomeUnknownException;
import dev.fenceline.Worker;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** Lane failure, replacement, recovery and addition while traffic flows (docs/reconfiguration.md). */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class FailoverTest {
    static final String THREE_LANES = "fenceline.transport.sim.lanes = ["
            + "{ types = [AM, RMA, AMO], min-delay = 0us, max-delay = 100us },"
            + "{ types = [RMA_BW, AMO], min-delay = 0us, max-delay = 100us },"
            + "{ types = [AM, RMA, RMA_BW, AMO], min-delay = 0us, max-delay = 100us } ]";

    record Rig(Fenceline fenceline, Worker a, Worker b, Endpoint ep, MemoryRegion region, SimNetwork net)
            implements AutoCloseable {
        static Rig of(String hocon, int bytes) throws Exception {
            Fenceline f = Fenceline.create(ConfigFactory.parseString(hocon));
            try {
                Worker a = f.newWorker("origin").toCompletableFuture().get(10, TimeUnit.SECONDS);
                Worker b = f.newWorker("target").toCompletableFuture().get(10, TimeUnit.SECONDS);
                MemoryRegion r = b.allocate(bytes);
                Endpoint ep = a.connect(b.address()).toCompletableFuture().get(10, TimeUnit.SECONDS);
                return new Rig(f, a, b, ep, r, SimNetwork.of(f));
            } catch (Exception | Error e) {
                f.close();
                throw e;
            }
        }

        long word(int index) {
            return region.buffer().order(ByteOrder.nativeOrder()).getLong(8 * index);
        }

        @Override
        public void close() {
            fenceline.close();
        }
    }

    static <T> T await(java.util.concurrent.CompletionStage<T> s) throws Exception {
        return s.toCompletableFuture().get(30, TimeUnit.SECONDS);
    }

    /**
     * The upstream CI failure, reproduced: endpoint fence mode, software atomics spread over several
     * lanes, lanes replaced and failed while atomics are pending. No blocking, every atomic applied
     * once, and ADD/fence/FETCH_ADD holds throughout.
     */
    @Test
    void reconfigurationWhileSoftwareAtomicsArePending() throws Exception {
        try (Rig r = Rig.of(THREE_LANES + "\nfenceline.fence.mode = endpoint", 64)) {
            long addr = r.region().address();
            List<CompletableFuture<Void>> posts = new ArrayList<>();
            int violations = 0;
            for (int i = 0; i < 500; i++) {
                posts.add(r.ep().atomicPost64(AtomicOp.ADD, addr, r.region().remoteKey(), 1).toCompletableFuture());
                if (i % 50 == 10) {
                    r.net().replaceLane(r.ep(), (i / 50) % 2 == 0 ? 0 : 2); // while the ADD is in flight
                }
                if (i == 200) {
                    r.net().failLane(r.ep(), 1);
                }
                if (i == 350) {
                    r.net().recoverLane(r.ep(), 1);
                }
                r.ep().fence();
                long got = await(r.ep().atomicFetch64(AtomicOp.ADD, addr, r.region().remoteKey(), 0));
                if (got != i + 1) {
                    violations++;
                }
            }
            CompletableFuture.allOf(posts.toArray(new CompletableFuture<?>[0])).get(30, TimeUnit.SECONDS);
            await(r.ep().flush());
            assertEquals(0, violations, "fetches that overtook the fenced ADD");
            assertEquals(500, r.word(0), "every ADD applied exactly once");
            var stats = r.a().statistics();
            assertTrue(stats.reconfigurations() >= 12, stats.toString());
            assertEquals(0, stats.failed(), stats.toString());
            assertTrue(r.ep().lanes().stream().allMatch(l -> l.live()), r.ep().lanes().toString());
        }
    }

    @Test
    void failoverIsInvisibleAndRestartsKeepWorkAndFenceQueue() throws Exception {
        try (Rig r = Rig.of(THREE_LANES, 1 << 20)) {
            int n = 2000;
            List<CompletableFuture<Void>> ops = new ArrayList<>();
            long base = r.region().address();
            for (int i = 0; i < n; i++) {
                ByteBuffer v = ByteBuffer.allocate(8).order(ByteOrder.nativeOrder()).putLong(0, i + 1L);
                ops.add(r.ep().put(v, base + 8L * (i % 4096), r.region().remoteKey()).toCompletableFuture());
                if (i % 7 == 0) {
                    r.ep().fence(); // keep requests queued behind strong fences while lanes change
                }
                if (i == 700) {
                    r.net().failLane(r.ep(), 0);
                }
                if (i == 1400) {
                    r.net().failLane(r.ep(), 2);
                }
            }
            CompletableFuture.allOf(ops.toArray(new CompletableFuture<?>[0])).get(60, TimeUnit.SECONDS);
            await(r.ep().flush());
            for (int i = 0; i < n; i++) {
                assertEquals(i + 1L, r.word(i), "word " + i);
            }
            var stats = r.a().statistics();
            assertEquals(0, stats.failed(), stats.toString());
            assertEquals(List.of(false, true, false), r.ep().lanes().stream().map(l -> l.live()).toList());
            assertTrue(stats.reconfigurations() >= 2, stats.toString());
        }
    }

    @Test
    void flushCompletesAcrossAReplacedLane() throws Exception {
        try (Rig r = Rig.of(THREE_LANES, 1 << 20)) {
            long base = r.region().address();
            for (int round = 0; round < 20; round++) {
                for (int i = 0; i < 100; i++) {
                    ByteBuffer v = ByteBuffer.allocate(8).order(ByteOrder.nativeOrder()).putLong(0, round * 1000L + i);
                    r.ep().put(v, base + 8L * i, r.region().remoteKey());
                }
                CompletableFuture<Void> flush = r.ep().flush().toCompletableFuture();
                r.net().replaceLane(r.ep(), round % 3);
                flush.get(30, TimeUnit.SECONDS);
                for (int i = 0; i < 100; i++) {
                    assertEquals(round * 1000L + i, r.word(i), "round " + round + " word " + i);
                }
            }
            assertTrue(r.ep().lanes().get(0).generation() >= 20, "each replacement bumps the generation");
        }
    }

    @Test
    void peerModeFailsOutstandingRequestsOnALaneFailure() throws Exception {
        try (Rig r = Rig.of(THREE_LANES + "\nfenceline.endpoint.error-mode = peer", 4096)) {
            // A slow lane keeps the ADDs in flight when it fails, however busy the machine is.
            r.net().setDelay(r.ep(), 0, java.time.Duration.ofMillis(20), java.time.Duration.ofMillis(50));
            List<CompletableFuture<Long>> ops = new ArrayList<>();
            for (int i = 0; i < 200; i++) {
                ops.add(r.ep().atomicFetch64(AtomicOp.ADD, r.region().address(), r.region().remoteKey(), 1)
                        .toCompletableFuture());
            }
            r.net().failLane(r.ep(), 0);
            int failed = 0;
            int unknown = 0;
            int done = 0;
            for (CompletableFuture<Long> f : ops) {
                try {
                    f.get(30, TimeUnit.SECONDS);
                    done++;
                } catch (ExecutionException e) {
                    if (e.getCause() instanceof dev.fenceline.OutcomeUnknownException) {
                        unknown++; // applied at the target, its answer lost with the lane
                    } else {
                        assertInstanceOf(EndpointFailedException.class, e.getCause());
                        failed++;
                    }
                }
            }
            assertTrue(failed > 0, "some were outstanding when the lane failed");
            long added = r.region().buffer().getLong(0);
            assertTrue(added >= done && added <= done + unknown, "each outcome tells the truth: " + added
                    + " added, " + done + " completed, " + unknown + " unknown, " + failed + " not applied");
            ExecutionException later = org.junit.jupiter.api.Assertions.assertThrows(ExecutionException.class,
                    () -> await(r.ep().put(ByteBuffer.allocate(1), r.region().address(), r.region().remoteKey())));
            assertInstanceOf(EndpointFailedException.class, later.getCause());
        }
    }

    @Test
    void losingTheLastLaneFailsEverythingOutstanding() throws Exception {
        // Slow enough that every put is still in flight when the lane fails, however busy the machine;
        // and none done on the fast path, where it would be complete on return.
        try (Rig r = Rig.of("fenceline.transport.sim.direct-access = off\n"
                + "fenceline.transport.sim.lanes = [{ types = [AM, RMA, RMA_BW, AMO],"
                + " min-delay = 20ms, max-delay = 40ms }]", 4096)) {
            List<CompletableFuture<Void>> ops = new ArrayList<>();
            for (int i = 0; i < 200; i++) {
                ops.add(r.ep().put(ByteBuffer.allocate(8), r.region().address(), r.region().remoteKey())
                        .toCompletableFuture());
            }
            r.net().failLane(r.ep(), 0);
            CompletableFuture<Void> all = CompletableFuture.allOf(ops.toArray(new CompletableFuture<?>[0]));
            ExecutionException e = org.junit.jupiter.api.Assertions.assertThrows(ExecutionException.class,
                    () -> all.get(30, TimeUnit.SECONDS));
            assertInstanceOf(EndpointFailedException.class, e.getCause());
            assertTrue(ops.stream().allMatch(CompletableFuture::isDone), "every request completed");
            // and nothing submitted later can hang: it fails at once, and close returns at once
            ExecutionException flush = org.junit.jupiter.api.Assertions.assertThrows(ExecutionException.class,
                    () -> r.ep().flush().toCompletableFuture().get(5, TimeUnit.SECONDS));
            assertInstanceOf(EndpointFailedException.class, flush.getCause());
            r.ep().close().toCompletableFuture().get(5, TimeUnit.SECONDS);
        }
    }

    @Test
    void aOneSidedAtomicWithALostAcknowledgementIsOutcomeUnknownNeverRetried() throws Exception {
        String lanes = "fenceline.transport.sim.lanes = ["
                + "{ types = [AM, RMA, AMO], min-delay = 20ms, max-delay = 40ms, protocol = hw },"
                + "{ types = [AM, RMA, RMA_BW], min-delay = 0us, max-delay = 10us } ]";
        try (Rig r = Rig.of(lanes, 4096)) {
            List<CompletableFuture<Long>> ops = new ArrayList<>();
            for (int i = 0; i < 100; i++) {
                ops.add(r.ep().atomicFetch64(AtomicOp.ADD, r.region().address(), r.region().remoteKey(), 1)
                        .toCompletableFuture());
            }
            // Fail the lane once some ADDs were applied: their acknowledgements are 20-40 ms away.
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
            while (r.word(0) == 0 && System.nanoTime() < deadline) {
                Thread.onSpinWait();
            }
            r.net().failLane(r.ep(), 0);
            int ok = 0;
            int unknown = 0;
            for (CompletableFuture<Long> f : ops) {
                try {
                    f.get(30, TimeUnit.SECONDS);
                    ok++;
                } catch (ExecutionException e) {
                    assertInstanceOf(OutcomeUnknownException.class, e.getCause(), e.getCause().toString());
                    unknown++;
                }
            }
            assertTrue(unknown > 0, "some ADDs were in flight when the lane died");
            await(r.ep().flush());
            long applied = r.word(0);
            assertTrue(applied >= ok && applied <= ok + unknown,
                    "applied " + applied + ": every confirmed ADD once, each unknown one at most once");
            assertFalse(r.ep().lanes().get(0).live());
        }
    }

    /** A runtime on a deterministic simulation: keepalive's seconds are virtual, and a seed repeats the run. */
    record SimRig(DeterministicSimulation sim, Worker a, Worker b, Endpoint ep, MemoryRegion region)
            implements AutoCloseable {
        static SimRig of(long seed, String hocon, int bytes) {
            DeterministicSimulation sim = DeterministicSimulation.start(seed, ConfigFactory.parseString(hocon));
            try {
                Worker a = sim.await(sim.fenceline().newWorker("origin"));
                Worker b = sim.await(sim.fenceline().newWorker("target"));
                MemoryRegion r = b.allocate(bytes);
                return new SimRig(sim, a, b, sim.await(a.connect(b.address())), r);
            } catch (RuntimeException | Error e) {
                sim.close();
                throw e;
            }
        }

        SimNetwork net() {
            return sim.network();
        }

        long word(int index) {
            return region.buffer().order(ByteOrder.nativeOrder()).getLong(8 * index);
        }

        @Override
        public void close() {
            sim.close();
        }
    }

    @Test
    void keepaliveFindsASilentLaneAndFailsItOver() {
        try (SimRig r = SimRig.of(31, THREE_LANES, 1 << 20)) {
            long base = r.region().address();
            r.net().silenceLane(r.ep(), 2);
            List<CompletableFuture<Void>> ops = new ArrayList<>();
            for (int i = 0; i < 300; i++) {
                ByteBuffer v = ByteBuffer.allocate(8).order(ByteOrder.nativeOrder()).putLong(0, i + 1L);
                ops.add(r.ep().put(v, base + 8L * i, r.region().remoteKey()).toCompletableFuture());
            }
            // The puts on the silent lane wait for keepalive (interval 1 s, timeout 5 s, virtual).
            r.sim().await(CompletableFuture.allOf(ops.toArray(new CompletableFuture<?>[0])));
            r.sim().await(r.ep().flush());
            for (int i = 0; i < 300; i++) {
                assertEquals(i + 1L, r.word(i), "word " + i);
            }
            assertFalse(r.ep().lanes().get(2).live(), "the silent lane was failed by keepalive");
            assertTrue(r.sim().elapsed().compareTo(java.time.Duration.ofSeconds(5)) > 0, "virtual " + r.sim().elapsed());
            assertEquals(0, r.a().statistics().failed());
        }
    }

    @Test
    void lostKeepalivesOnAnIdleLaneFailItOverAndNothingIsLost() {
        try (SimRig r = SimRig.of(32, THREE_LANES, 1 << 20)) {
            r.net().dropKeepalives(r.ep(), 1);
            // Idle: probed after the idle interval (20 s), failed when the probe's timeout (5 s) ends.
            r.sim().advance(java.time.Duration.ofSeconds(24));
            assertTrue(r.ep().lanes().get(1).live(), "not before the timeout: " + r.ep().lanes());
            r.sim().advance(java.time.Duration.ofSeconds(3));
            assertFalse(r.ep().lanes().get(1).live(), "keepalive declared the idle lane dead");
            r.sim().await(r.ep().put(ByteBuffer.allocate(1 << 16), r.region().address(), r.region().remoteKey()));
            assertEquals(0, r.a().statistics().failed());
        }
    }

    @Test
    void aPartitionEndsTheEndpointThroughKeepaliveAndFailsWhatWasOutstanding() {
        try (SimRig r = SimRig.of(33, THREE_LANES, 4096)) {
            r.net().partition(r.a().address(), r.b().address());
            List<CompletableFuture<Void>> ops = new ArrayList<>();
            for (int i = 0; i < 50; i++) {
                ops.add(r.ep().put(ByteBuffer.allocate(8), r.region().address(), r.region().remoteKey())
                        .toCompletableFuture());
            }
            for (CompletableFuture<Void> f : ops) {
                java.util.concurrent.CompletionException e = org.junit.jupiter.api.Assertions.assertThrows(
                        java.util.concurrent.CompletionException.class, () -> r.sim().await(f));
                assertInstanceOf(EndpointFailedException.class, e.getCause());
            }
            r.net().heal(r.a().address(), r.b().address());
            Endpoint again = r.sim().await(r.a().connect(r.b().address()));
            r.sim().await(again.put(ByteBuffer.wrap(new byte[] {3}), r.region().address(), r.region().remoteKey()));
            assertEquals(3, r.region().buffer().get(0), "after healing, a new endpoint works");
        }
    }

    /**
     * A connect across a partition is a handshake that gets no answer: it waits (on virtual time)
     * until the partition heals, and fails at the sim's connect-timeout (5 s) if it does not.
     */
    @Test
    void aConnectAcrossAPartitionWaitsForTheHealAndFailsWithoutIt() {
        try (SimRig r = SimRig.of(34, THREE_LANES, 4096)) {
            r.net().partition(r.a().address(), r.b().address());
            CompletableFuture<Endpoint> waiting = r.a().connect(r.b().address()).toCompletableFuture();
            r.sim().advance(java.time.Duration.ofSeconds(4));
            assertFalse(waiting.isDone(), "no lane while partitioned");
            r.net().heal(r.a().address(), r.b().address());
            Endpoint healed = r.sim().await(waiting);
            r.sim().await(healed.put(ByteBuffer.wrap(new byte[] {7}), r.region().address(), r.region().remoteKey()));
            assertEquals(7, r.region().buffer().get(0), "the endpoint connected at the heal works");

            r.net().partition(r.a().address(), r.b().address());
            CompletableFuture<Endpoint> refused = r.a().connect(r.b().address()).toCompletableFuture();
            java.util.concurrent.CompletionException e = org.junit.jupiter.api.Assertions.assertThrows(
                    java.util.concurrent.CompletionException.class, () -> r.sim().await(refused));
            assertInstanceOf(EndpointFailedException.class, e.getCause());
            assertTrue(String.valueOf(e.getCause().getMessage()).contains("no handshake got through within PT5S"),
                    String.valueOf(e.getCause().getMessage()));
        }
    }

    /**
     * Threads keep submitting while the endpoint loses its last lane and then is closed: every
     * request completes (result or typed error), none hangs. Seeded; the seed is printed. On wall
     * time, because it is about real threads racing the actor; the failure and the close are
     * ordered by how much was submitted, not by sleeps.
     */
    @Test
    void nothingHangsWhenTheEndpointEndsUnderConcurrentSubmission() throws Exception {
        long seed = Long.getLong("fenceline.test.seed", 77);
        System.out.println("nothingHangsWhenTheEndpointEndsUnderConcurrentSubmission seed " + seed);
        try (Rig r = Rig.of("fenceline.transport.sim.lanes = [{ types = [AM, RMA, RMA_BW, AMO],"
                + " min-delay = 0us, max-delay = 50us }]", 4096)) {
            java.util.concurrent.ConcurrentLinkedQueue<CompletableFuture<?>> all =
                    new java.util.concurrent.ConcurrentLinkedQueue<>();
            java.util.concurrent.atomic.AtomicBoolean stop = new java.util.concurrent.atomic.AtomicBoolean();
            List<Thread> threads = new ArrayList<>();
            for (int t = 0; t < 4; t++) {
                java.util.SplittableRandom rnd = new java.util.SplittableRandom(seed + t);
                Thread th = new Thread(() -> {
                    while (!stop.get()) {
                        int k = rnd.nextInt(4);
                        all.add((k == 0 ? r.ep().flush()
                                : k == 1 ? r.ep().atomicFetch64(AtomicOp.ADD, r.region().address(),
                                        r.region().remoteKey(), 1)
                                : k == 2 ? r.ep().sendActiveMessage(1, null, null)
                                : r.ep().put(ByteBuffer.allocate(8), r.region().address(), r.region().remoteKey()))
                                .toCompletableFuture());
                        if (rnd.nextInt(8) == 0) {
                            r.ep().fence();
                        }
                    }
                });
                th.start();
                threads.add(th);
            }
            awaitSubmissions(all, 200);
            r.net().failLane(r.ep(), 0);
            awaitSubmissions(all, all.size() + 200);
            CompletableFuture<Void> closed = r.ep().close().toCompletableFuture();
            awaitSubmissions(all, all.size() + 100);
            stop.set(true);
            for (Thread th : threads) {
                th.join(10_000);
            }
            closed.get(30, TimeUnit.SECONDS);
            int n = 0;
            for (CompletableFuture<?> f : all) {
                try {
                    f.get(30, TimeUnit.SECONDS);
                } catch (ExecutionException e) {
                    assertTrue(e.getCause() instanceof dev.fenceline.FencelineException, e.getCause().toString());
                }
                n++;
            }
            assertTrue(n > 500, "the threads really submitted: " + n);
        }
    }

    /** Waits (spinning, bounded) until the submitting threads have made {@code n} calls. */
    private static void awaitSubmissions(java.util.Collection<?> calls, int n) {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
        while (calls.size() < n) {
            assertTrue(System.nanoTime() < deadline, "the threads made only " + calls.size() + " calls");
            Thread.onSpinWait();
        }
    }

    @Test
    void anAddedLaneCarriesTraffic() {
        try (SimRig r = SimRig.of(34, "fenceline.transport.sim.lanes = [{ types = [AM, RMA, AMO],"
                + " min-delay = 0us, max-delay = 20us }]", 1 << 20)) {
            r.net().addLane(r.ep(), Set.of(LaneType.RMA_BW));
            r.sim().advance(java.time.Duration.ofMillis(1));
            assertEquals(2, r.ep().lanes().size());
            ByteBuffer big = ByteBuffer.allocateDirect(1 << 20);
            big.put(0, (byte) 5);
            r.sim().await(r.ep().put(big, r.region().address(), r.region().remoteKey()));
            assertEquals(5, r.region().buffer().get(0));
            assertEquals(1, r.a().statistics().reconfigurations());
        }
    }
}
