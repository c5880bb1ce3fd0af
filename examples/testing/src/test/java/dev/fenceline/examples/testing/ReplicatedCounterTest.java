package dev.fenceline.examples.testing;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import dev.fenceline.Endpoint;
import dev.fenceline.Fenceline;
import dev.fenceline.MemoryRegion;
import dev.fenceline.Worker;
import dev.fenceline.examples.testing.ReplicatedCounter.Bug;
import dev.fenceline.testkit.SimNetwork;
import dev.fenceline.testkit.history.History;
import dev.fenceline.testkit.history.HistoryChecker;
import dev.fenceline.testkit.junit.FencelineTest;
import dev.fenceline.AtomicOp;
import java.nio.ByteOrder;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * How a user tests a service built on Fenceline: run it over the sim, inject lane failures, record
 * what it did, and let the history checker judge. The last two tests break the service on purpose
 * and show that the checker catches each bug.
 */
@FencelineTest(config = "fenceline.transport.sim.lanes = ["
        + "{ types = [AM, RMA, AMO], min-delay = 0us, max-delay = 100us },"
        + "{ types = [AM, RMA_BW, AMO], min-delay = 0us, max-delay = 100us },"
        + "{ types = [AM, RMA, RMA_BW, AMO], min-delay = 0us, max-delay = 100us } ]")
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class ReplicatedCounterTest {
    private static final int REPLICAS = 3;

    /** Three replica workers, a client worker, and recorded endpoints from the client to each. */
    private record Setup(List<ReplicatedCounter.Replica> replicas, List<Endpoint> raw, Map<Long, MemoryRegion> regions,
            History history) {
        static Setup of(Fenceline fenceline) throws Exception {
            Worker client = fenceline.newWorker("client").toCompletableFuture().get(10, TimeUnit.SECONDS);
            History history = new History();
            List<ReplicatedCounter.Replica> replicas = new ArrayList<>();
            List<Endpoint> raw = new ArrayList<>();
            Map<Long, MemoryRegion> regions = new ConcurrentHashMap<>();
            for (int i = 0; i < REPLICAS; i++) {
                Worker replica = fenceline.newWorker("replica-" + i).toCompletableFuture().get(10, TimeUnit.SECONDS);
                MemoryRegion counter = replica.allocate(8);
                Endpoint ep = client.connect(replica.address()).toCompletableFuture().get(10, TimeUnit.SECONDS);
                raw.add(ep);
                regions.put(counter.address(), counter);
                replicas.add(new ReplicatedCounter.Replica(history.record(ep), counter.address(),
                        client.unpackRemoteKey(counter.remoteKey().toBytes())));
            }
            return new Setup(replicas, raw, regions, history);
        }

        long valueAt(long address) {
            return regions.get(address).buffer().order(ByteOrder.nativeOrder()).getLong(0);
        }

        /** Runs the workload: increments and reads, with lane faults injected on the way. */
        void run(ReplicatedCounter counter, SimNetwork net, int rounds) throws Exception {
            List<CompletableFuture<?>> pending = new ArrayList<>();
            for (int i = 0; i < rounds; i++) {
                pending.add(counter.increment(1 + i % 3).toCompletableFuture());
                if (i % 4 == 3) {
                    pending.add(counter.read().toCompletableFuture());
                }
                if (net != null && i == rounds / 3) {
                    net.failLane(raw.get(0), 1);
                }
                if (net != null && i == rounds / 2) {
                    net.replaceLane(raw.get(1), 0);
                }
            }
            CompletableFuture.allOf(pending.toArray(new CompletableFuture<?>[0])).get(60, TimeUnit.SECONDS);
            for (ReplicatedCounter.Replica r : replicas) {
                r.endpoint().flush().toCompletableFuture().get(30, TimeUnit.SECONDS);
            }
        }
    }

    @Test
    void theCounterSurvivesLaneFailures(Fenceline fenceline, SimNetwork net) throws Exception {
        Setup s = Setup.of(fenceline);
        s.run(new ReplicatedCounter(s.replicas(), Bug.NONE), net, 600);
        HistoryChecker.of(s.history())
                .assertEveryRequestCompleted()
                .assertFencesHeld()
                .assertFlushesCovered()
                .assertExactlyOnce(s::valueAt)
                .assertProgramOrderObserved(); // the service's own contract: reads see earlier increments
        long expected = 0;
        for (int i = 0; i < 600; i++) {
            expected += 1 + i % 3;
        }
        for (ReplicatedCounter.Replica r : s.replicas()) {
            assertEquals(expected, s.valueAt(r.address()), "every replica has every increment once");
        }
        assertEquals(false, s.raw().get(0).lanes().get(1).live(), "lane 1 to replica 0 really failed");
    }

    @Test
    void theCheckerCatchesAMissingFence(Fenceline fenceline) throws Exception {
        Setup s = Setup.of(fenceline);
        s.run(new ReplicatedCounter(s.replicas(), Bug.READ_WITHOUT_FENCE), null, 600);
        HistoryChecker checker = HistoryChecker.of(s.history()).assertEveryRequestCompleted()
                .assertFencesHeld(); // the runtime kept its word: there was no fence to hold
        AssertionError e = assertThrows(AssertionError.class, checker::assertProgramOrderObserved);
        System.out.println("caught, as it should be: " + e.getMessage());
    }

    @Test
    void theCheckerCatchesADoubleAppliedAtomic(Fenceline fenceline, SimNetwork net) throws Exception {
        Setup s = Setup.of(fenceline);
        Endpoint raw = s.raw().get(0);
        ReplicatedCounter.Replica replica = s.replicas().get(0);
        // A transport that re-sends an ADD after a lane failure without deduplication applies it
        // twice. Slow lanes keep acknowledgements in flight when two lanes fail, so re-sends happen:
        // an ADD applied at the target is acknowledged 50-100 ms later, far longer than it takes this
        // thread to see it applied and fail the lanes, even on a loaded machine.
        net.breakDeduplication(raw.peer());
        for (int lane = 0; lane < raw.lanes().size(); lane++) {
            net.setDelay(raw, lane, Duration.ofMillis(50), Duration.ofMillis(100));
        }
        List<CompletableFuture<Void>> adds = new ArrayList<>();
        for (int i = 0; i < 300; i++) {
            adds.add(replica.endpoint().atomicPost64(AtomicOp.ADD, replica.address(), replica.key(), 1)
                    .toCompletableFuture());
        }
        // Wait until some ADDs were applied: their acknowledgements take another 50-100 ms to come back.
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        while (s.valueAt(replica.address()) < 20 && deadline - System.nanoTime() > 0) {
            Thread.onSpinWait();
        }
        net.failLane(raw, 0);
        net.failLane(raw, 1);
        CompletableFuture.allOf(adds.toArray(new CompletableFuture<?>[0])).get(60, TimeUnit.SECONDS);
        replica.endpoint().flush().toCompletableFuture().get(30, TimeUnit.SECONDS);
        HistoryChecker checker = HistoryChecker.of(s.history()).assertEveryRequestCompleted();
        AssertionError e = assertThrows(AssertionError.class, () -> checker.assertExactlyOnce(s::valueAt));
        System.out.println("caught, as it should be: " + e.getMessage());
    }
}
