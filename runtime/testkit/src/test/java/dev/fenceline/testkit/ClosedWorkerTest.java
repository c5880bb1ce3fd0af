package dev.fenceline.testkit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.typesafe.config.ConfigFactory;
import dev.fenceline.Endpoint;
import dev.fenceline.EndpointClosedException;
import dev.fenceline.Worker;
import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * A closed worker says so: a connect under way when it closes fails with
 * {@link EndpointClosedException} at the close (it waited for the ask's timeout, then failed
 * untyped), and it registers, allocates and unpacks nothing more (regions made after the close
 * were never closed). On virtual time.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class ClosedWorkerTest {
    private static final String LANES = "fenceline.transport.sim.lanes = ["
            + "{ types = [AM, RMA, RMA_BW, AMO], min-delay = 0us, max-delay = 50us } ]";

    @Test
    void aConnectUnderWayFailsWhenItsWorkerCloses() {
        try (DeterministicSimulation sim = DeterministicSimulation.start(51, ConfigFactory.parseString(LANES))) {
            Worker a = sim.await(sim.fenceline().newWorker("a"));
            Worker b = sim.await(sim.fenceline().newWorker("b"));
            sim.network().partition(a.address(), b.address()); // the handshake waits for the heal
            CompletableFuture<Endpoint> connecting = a.connect(b.address()).toCompletableFuture();
            sim.advance(Duration.ofSeconds(1));
            assertTrue(!connecting.isDone(), "still connecting across the partition");
            sim.await(a.close());
            assertTrue(connecting.isDone(), "the connect ended with its worker's close");
            CompletionException e = assertThrows(CompletionException.class, connecting::join);
            assertInstanceOf(EndpointClosedException.class, e.getCause());
            assertTrue(e.getCause().getMessage().contains("worker 'a' closed while connecting"),
                    e.getCause().getMessage());
            assertEquals(0, a.endpoints().size());
        }
    }

    @Test
    void aClosedWorkerRegistersAllocatesAndUnpacksNothing() {
        try (DeterministicSimulation sim = DeterministicSimulation.start(52, ConfigFactory.parseString(LANES))) {
            Worker a = sim.await(sim.fenceline().newWorker("a"));
            Worker b = sim.await(sim.fenceline().newWorker("b"));
            byte[] key = b.allocate(64).remoteKey().toBytes();
            sim.await(a.close());
            assertThrows(EndpointClosedException.class, () -> a.allocate(64));
            assertThrows(EndpointClosedException.class, () -> a.register(ByteBuffer.allocateDirect(64)));
            EndpointClosedException e = assertThrows(EndpointClosedException.class, () -> a.unpackRemoteKey(key));
            assertTrue(e.getMessage().contains("worker 'a' is closed"), e.getMessage());
        }
    }
}
