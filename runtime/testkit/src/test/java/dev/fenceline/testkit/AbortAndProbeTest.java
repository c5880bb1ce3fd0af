package dev.fenceline.testkit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.typesafe.config.ConfigFactory;
import dev.fenceline.AtomicOp;
import dev.fenceline.Endpoint;
import dev.fenceline.EndpointFailedException;
import dev.fenceline.MemoryRegion;
import dev.fenceline.OutcomeUnknownException;
import dev.fenceline.RemoteKey;
import dev.fenceline.Worker;
import dev.fenceline.testkit.history.History;
import dev.fenceline.testkit.history.HistoryChecker;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * {@link Endpoint#abort} and {@link Endpoint#probeLanes}: what a service does when something outside
 * the runtime (a cluster's membership, its failure detector) knows more about the peer than the
 * keepalive does. Deterministic, on virtual time.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class AbortAndProbeTest {
    private static final int COUNTER = 64;

    private static String oneLane(String options, String keepalive) {
        return "fenceline.transport.sim.direct-access = off\n" + keepalive
                + "\nfenceline.transport.sim.lanes = [ { types = [RMA, AMO, AM], min-delay = 5us, max-delay = 20us"
                + options + " } ]";
    }

    private static ByteBuffer word(long v) {
        return ByteBuffer.allocate(8).order(ByteOrder.nativeOrder()).putLong(0, v);
    }

    /**
     * The peer is stopped with puts and ADDs sent to it; the endpoint is aborted long before the
     * keepalive would notice; the peer then resumes and takes what waited.
     */
    private static void abortWhileThePeerIsStopped(String laneOptions, Class<? extends Throwable> outcome,
            long appliedAfterResume) {
        String hocon = oneLane(laneOptions, "fenceline.endpoint.keepalive { interval = 30s, timeout = 30s }");
        try (DeterministicSimulation sim = DeterministicSimulation.start(11, ConfigFactory.parseString(hocon))) {
            Worker a = sim.await(sim.fenceline().newWorker("origin"));
            Worker b = sim.await(sim.fenceline().newWorker("target"));
            MemoryRegion region = b.allocate(4096);
            Endpoint raw = sim.await(a.connect(b.address()));
            History history = new History();
            Endpoint ep = history.record(raw);
            RemoteKey key = a.unpackRemoteKey(region.remoteKey().toBytes());
            sim.network().stallLane(raw, 0, Duration.ofSeconds(5));
            List<CompletableFuture<?>> sent = new ArrayList<>();
            for (int i = 0; i < 4; i++) {
                sent.add(ep.put(word(7), region.address() + 8L * i, key).toCompletableFuture());
                sent.add(ep.atomicPost64(AtomicOp.ADD, region.address() + COUNTER, key, 1).toCompletableFuture());
            }
            sim.advance(Duration.ofMillis(1)); // all of it is on the lane, waiting for the stopped peer
            assertTrue(sent.stream().noneMatch(CompletableFuture::isDone), "nothing answered yet");

            ep.abort("member node-2 was removed");
            sim.advance(Duration.ofMillis(1));
            for (CompletableFuture<?> f : sent) {
                CompletionException e = assertThrows(CompletionException.class, () -> sim.await(f));
                assertInstanceOf(outcome, e.getCause(), "the outcome of a request sent before the abort");
            }
            CompletionException later = assertThrows(CompletionException.class,
                    () -> sim.await(ep.put(word(9), region.address(), key)));
            assertInstanceOf(EndpointFailedException.class, later.getCause());
            assertTrue(later.getCause().getMessage().contains("member node-2 was removed"), later.getCause().getMessage());
            assertFalse(raw.lanes().get(0).live(), "its lane is given up");

            sim.advance(Duration.ofSeconds(10)); // the peer resumes and takes what waited for it
            long counter = region.buffer().order(ByteOrder.nativeOrder()).getLong(COUNTER);
            assertEquals(appliedAfterResume, counter, "ADDs the resumed peer applied");
            HistoryChecker.of(history).assertEveryRequestCompleted().assertOutcomesTruthful()
                    .assertExactlyOnce(address -> counter);
            sim.await(raw.close()); // a failed endpoint still closes
        }
    }

    @Test
    void anAbortWithdrawsWhatARevocableLaneStillHolds() {
        abortWhileThePeerIsStopped("", EndpointFailedException.class, 0);
    }

    @Test
    void anAbortOverASocketLikeLaneSaysTheOutcomeIsUnknownAndTheLateCopiesApplyOnce() {
        abortWhileThePeerIsStopped(", revocable = off", OutcomeUnknownException.class, 4);
    }

    /** @return when the endpoint over a lane whose peer is stopped failed, or -1 within 8 s */
    private static long failsAfter(boolean probe) {
        String hocon = oneLane("", "fenceline.endpoint.keepalive { interval = 20s, timeout = 2s }");
        try (DeterministicSimulation sim = DeterministicSimulation.start(5, ConfigFactory.parseString(hocon))) {
            Worker a = sim.await(sim.fenceline().newWorker("origin"));
            Worker b = sim.await(sim.fenceline().newWorker("target"));
            Endpoint ep = sim.await(a.connect(b.address()));
            sim.advance(Duration.ofSeconds(1));
            sim.network().stallLane(ep, 0, Duration.ofSeconds(60));
            if (probe) {
                ep.probeLanes();
            }
            for (int ms = 0; ms < 8000; ms += 10) {
                sim.advance(Duration.ofMillis(10));
                if (!ep.lanes().get(0).live()) {
                    return ms + 10;
                }
            }
            return -1;
        }
    }

    @Test
    void aProbedEndpointFindsAStoppedPeerWithinTheKeepaliveTimeoutNotTheInterval() {
        long probed = failsAfter(true);
        assertTrue(probed > 2000 && probed <= 2100, "failed " + probed + " ms after the hint; the timeout is 2 s");
        assertEquals(-1, failsAfter(false), "without the hint the idle lane is not probed for 20 s");
    }

    @Test
    void aProbeOfALivePeerFailsNothing() {
        String hocon = oneLane("", "fenceline.endpoint.keepalive { interval = 20s, timeout = 2s }");
        try (DeterministicSimulation sim = DeterministicSimulation.start(6, ConfigFactory.parseString(hocon))) {
            Worker a = sim.await(sim.fenceline().newWorker("origin"));
            Worker b = sim.await(sim.fenceline().newWorker("target"));
            MemoryRegion region = b.allocate(64);
            Endpoint ep = sim.await(a.connect(b.address()));
            for (int i = 0; i < 5; i++) {
                ep.probeLanes();
                sim.advance(Duration.ofSeconds(3));
            }
            assertTrue(ep.lanes().get(0).live(), ep.lanes().toString());
            RemoteKey key = a.unpackRemoteKey(region.remoteKey().toBytes());
            sim.await(ep.put(word(3), region.address(), key));
            assertEquals(3, region.buffer().order(ByteOrder.nativeOrder()).getLong(0));
        }
    }
}
