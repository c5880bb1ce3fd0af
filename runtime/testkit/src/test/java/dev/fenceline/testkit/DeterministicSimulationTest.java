package dev.fenceline.testkit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.typesafe.config.Config;
import com.typesafe.config.ConfigFactory;
import dev.fenceline.AtomicOp;
import dev.fenceline.Endpoint;
import dev.fenceline.MemoryRegion;
import dev.fenceline.RemoteKey;
import dev.fenceline.Worker;
import dev.fenceline.testkit.history.Event;
import dev.fenceline.testkit.history.History;
import dev.fenceline.testkit.history.HistoryChecker;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.SplittableRandom;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.TimeUnit;
import java.util.zip.CRC32;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * A deterministic simulation repeats itself: the same seed gives the same run, event for event,
 * through lane failures, recoveries and replacements, and another seed gives another run. Virtual
 * time makes keepalive's seconds cost milliseconds.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class DeterministicSimulationTest {
    private static final Config LANES = ConfigFactory.parseString("fenceline.transport.sim.lanes = ["
            + "{ types = [AM, RMA, AMO], min-delay = 0us, max-delay = 40us },"
            + "{ types = [AM, RMA_BW, AMO], min-delay = 0us, max-delay = 80us },"
            + "{ types = [AM, RMA, RMA_BW, AMO], min-delay = 0us, max-delay = 60us } ]\n"
            + "fenceline.transport.sim.max-fragment = 8KiB");
    private static final int COUNTERS = 4;
    private static final int DATA = 4096;

    /** What a run did, in enough detail that two runs compare. */
    private record Run(String events, long steps, Duration elapsed, long memory, int ops) {
    }

    private static Run run(long seed) {
        try (DeterministicSimulation sim = DeterministicSimulation.start(seed, LANES)) {
            Worker a = sim.await(sim.fenceline().newWorker("a"));
            Worker b = sim.await(sim.fenceline().newWorker("b"));
            MemoryRegion region = b.allocate(DATA + 64 * 1024);
            Endpoint raw = sim.await(a.connect(b.address()));
            RemoteKey key = a.unpackRemoteKey(region.remoteKey().toBytes());
            long base = region.address();
            History history = new History();
            Endpoint ep = history.record(raw);
            SplittableRandom random = new SplittableRandom(seed);
            for (int round = 0; round < 40; round++) {
                List<CompletableFuture<?>> window = new ArrayList<>();
                for (int k = 0; k < 12; k++) {
                    long counter = base + 8L * random.nextInt(COUNTERS);
                    long data = base + 64 + random.nextInt(DATA);
                    CompletionStage<?> s = switch (random.nextInt(6)) {
                        case 0 -> ep.atomicPost64(AtomicOp.ADD, counter, key, 1 + random.nextInt(5));
                        case 1 -> ep.atomicFetch64(AtomicOp.ADD, counter, key, 1 + random.nextInt(5));
                        case 2 -> {
                            byte[] bytes = new byte[1 + random.nextInt(64)];
                            random.nextBytes(bytes);
                            yield ep.put(ByteBuffer.wrap(bytes), data, key);
                        }
                        case 3 -> ep.put(ByteBuffer.allocate(20_000), base + DATA + 64, key); // fragments, bulk lanes
                        case 4 -> ep.get(ByteBuffer.allocate(1 + random.nextInt(64)), data, key);
                        default -> {
                            ep.fence();
                            yield CompletableFuture.completedFuture(null);
                        }
                    };
                    window.add(s.toCompletableFuture());
                }
                switch (round) {
                    case 10 -> sim.network().failLane(raw, 1);
                    case 15 -> sim.network().failLane(raw, 2); // one lane left: the fast path by grant opens
                    case 20 -> sim.network().recoverLane(raw, 1);
                    case 25 -> sim.network().recoverLane(raw, 2);
                    case 30 -> sim.network().replaceLane(raw, 0);
                    // The target stops taking lane 0 past keepalive's timeout: the endpoint gives it up
                    // and sends its copies again; 8 s later the target takes what waited for it.
                    case 34 -> sim.network().stallLane(raw, 0, Duration.ofSeconds(8));
                    default -> { }
                }
                sim.await(CompletableFuture.allOf(window.toArray(new CompletableFuture<?>[0])));
            }
            sim.await(ep.flush());
            ByteBuffer memory = region.buffer().order(ByteOrder.nativeOrder());
            HistoryChecker.of(history).assertEveryRequestCompleted().assertFlushesCovered().assertFencesHeld()
                    .assertOutcomesTruthful().assertExactlyOnce(address -> memory.getLong((int) (address - base)));
            StringBuilder events = new StringBuilder();
            history.ops().stream().flatMap(op -> history.events(op).stream())
                    .sorted(Comparator.comparingLong(Event::order))
                    .forEach(e -> events.append(e.opId()).append(e.kind().name().charAt(0)).append(e.lane())
                            .append(':').append(e.sequence()).append(' '));
            CRC32 crc = new CRC32();
            crc.update(memory.duplicate().clear());
            assertEquals(0, sim.foreignTasks(), "every task came from the simulation's own thread");
            assertTrue(a.statistics().direct() > 0, "the fast path by grant ran: " + a.statistics());
            WorkerTotalsAssert.assertCountsItsOnlyEndpoint(a.statistics(), ep.statistics());
            return new Run(events.toString(), sim.steps(), sim.elapsed(), crc.getValue(), history.ops().size());
        }
    }

    @Test
    void theSameSeedRunsTheSameWayAndAnotherSeedDoesNot() {
        long seed = DeterministicSimulation.seedFromEnvironment(20261129L);
        Run first = run(seed);
        Run second = run(seed);
        String rerun = "FENCELINE_TEST_SEED=" + seed;
        assertTrue(first.ops() > 400, "the workload ran: " + first.ops() + " calls");
        assertEquals(first.steps(), second.steps(), "steps differ for one seed; " + rerun);
        assertEquals(first.elapsed(), second.elapsed(), "virtual time differs for one seed; " + rerun);
        assertEquals(first.memory(), second.memory(), "target memory differs for one seed; " + rerun);
        assertEquals(first.events(), second.events(), "event order differs for one seed; " + rerun);

        System.out.printf("deterministic run, seed %d: %d calls, %d steps, %s virtual, events %08x, memory %08x%n",
                seed, first.ops(), first.steps(), first.elapsed(), first.events().hashCode(), first.memory());
        Run other = run(seed + 1);
        assertNotEquals(first.events(), other.events(), "seeds " + seed + " and " + (seed + 1) + " ran the same way");
    }

    @Test
    void keepaliveCountsVirtualSeconds() {
        long real = System.nanoTime();
        try (DeterministicSimulation sim = DeterministicSimulation.start(7, LANES)) {
            Worker a = sim.await(sim.fenceline().newWorker("a"));
            Worker b = sim.await(sim.fenceline().newWorker("b"));
            Endpoint ep = sim.await(a.connect(b.address()));
            sim.network().silenceLane(ep, 0);
            // Nothing waits for the lane: idle interval 20 s + timeout 5 s, not yet.
            sim.advance(Duration.ofSeconds(24));
            assertTrue(ep.lanes().get(0).live(), "failed before the keepalive timeout: " + ep.lanes());
            sim.advance(Duration.ofSeconds(3));
            assertFalse(ep.lanes().get(0).live(), "keepalive found the silenced lane: " + ep.lanes());
            assertTrue(sim.elapsed().compareTo(Duration.ofSeconds(27)) >= 0, "virtual time " + sim.elapsed());
        }
        assertTrue(System.nanoTime() - real < TimeUnit.SECONDS.toNanos(8), "27 virtual seconds took "
                + (System.nanoTime() - real) / 1_000_000 + " ms of real time");
    }

    /** Work waiting for a silent lane brings keepalive back to its short interval: found in seconds. */
    @Test
    void workWaitingOnSilencedLanesFindsThemWithinTheIntervalAndTimeout() {
        try (DeterministicSimulation sim = DeterministicSimulation.start(9, LANES)) {
            Worker a = sim.await(sim.fenceline().newWorker("a"));
            Worker b = sim.await(sim.fenceline().newWorker("b"));
            MemoryRegion region = b.allocate(64);
            Endpoint ep = sim.await(a.connect(b.address()));
            sim.advance(Duration.ofSeconds(50)); // long idle: every lane heard from by its idle probes
            assertTrue(ep.lanes().stream().allMatch(l -> l.live()), "idle lanes answer their probes: " + ep.lanes());
            for (int lane = 0; lane < 3; lane++) {
                sim.network().silenceLane(ep, lane);
            }
            CompletableFuture<Void> put = ep.put(ByteBuffer.allocate(8), region.address(),
                    a.unpackRemoteKey(region.remoteKey().toBytes())).toCompletableFuture();
            sim.advance(Duration.ofSeconds(5)); // probed within two ticks (1 s each), timeout 5 s: not yet
            assertTrue(ep.lanes().stream().allMatch(l -> l.live()), "before the timeout: " + ep.lanes());
            sim.advance(Duration.ofSeconds(4)); // an idle endpoint's lanes would wait 20 s for their probe
            assertTrue(ep.lanes().stream().noneMatch(l -> l.live()), "not an idle interval later: " + ep.lanes());
            assertTrue(put.isDone(), "the endpoint failed, and with it the put that waited: " + put);
        }
    }

    @Test
    void awaitingWhatNeverCompletesFailsAfterItsVirtualLimit() {
        try (DeterministicSimulation sim = DeterministicSimulation.start(11, LANES)) {
            Worker a = sim.await(sim.fenceline().newWorker("a"));
            Worker b = sim.await(sim.fenceline().newWorker("b"));
            sim.await(a.connect(b.address())); // its keepalive keeps timers armed from now on
            long real = System.nanoTime();
            IllegalStateException e = assertThrows(IllegalStateException.class,
                    () -> sim.await(new CompletableFuture<Void>(), Duration.ofMinutes(1)));
            assertTrue(e.getMessage().contains("not done after 60000 ms of virtual time"), e.getMessage());
            assertTrue(System.nanoTime() - real < TimeUnit.SECONDS.toNanos(30), "a virtual minute took "
                    + (System.nanoTime() - real) / 1_000_000 + " ms");
        }
    }

    @Test
    void onlyOneSimulationRunsAtATimeAndOnlyItsThreadDrivesIt() throws Exception {
        try (DeterministicSimulation sim = DeterministicSimulation.start(3, LANES)) {
            assertThrows(IllegalStateException.class, () -> DeterministicSimulation.start(4, LANES));
            CompletableFuture<Throwable> other = CompletableFuture.supplyAsync(() -> {
                try {
                    sim.advance(Duration.ofMillis(1));
                    return null;
                } catch (IllegalStateException e) {
                    return e;
                }
            });
            assertTrue(other.get(10, TimeUnit.SECONDS) instanceof IllegalStateException);
        }
    }
}
