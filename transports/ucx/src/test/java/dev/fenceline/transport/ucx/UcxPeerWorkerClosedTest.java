package dev.fenceline.transport.ucx;

import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.typesafe.config.ConfigFactory;
import dev.fenceline.Endpoint;
import dev.fenceline.EndpointFailedException;
import dev.fenceline.Fenceline;
import dev.fenceline.LaneInfo;
import dev.fenceline.Worker;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * A worker that closes tells its peers (wireup's LEAVING): their lanes to it fail at once, naming it,
 * rather than when keepalive gives up (here 60 s, so only the message can do it in time). Over UCT
 * shared memory, where nothing else would tell (the peer's process lives on), and over tcp.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class UcxPeerWorkerClosedTest {
    @BeforeAll
    static void ucx() {
        UcxAssumptions.ucxAvailable();
    }

    private static <T> T await(java.util.concurrent.CompletionStage<T> s) throws Exception {
        return s.toCompletableFuture().get(20, TimeUnit.SECONDS);
    }

    @ParameterizedTest(name = "over UCT {0}")
    @ValueSource(strings = {"posix", "tcp"})
    void thePeersLanesFailAtOnceNamingTheClosedWorker(String tls) throws Exception {
        try (Fenceline f = Fenceline.create(ConfigFactory.parseString("fenceline.transports = [ucx]\n"
                + "fenceline.transport.ucx.tls = [" + tls + "]\n"
                + (tls.equals("tcp") ? "fenceline.transport.ucx.devices = [lo]\n" : "")
                + "fenceline.endpoint.keepalive.timeout = 60s"))) {
            Worker a = await(f.newWorker("a"));
            Worker b = await(f.newWorker("b"));
            b.setActiveMessageHandler(1, (h, p) -> { });
            Endpoint ep = await(a.connect(b.address()));
            await(ep.sendActiveMessage(1, null, null));
            await(b.close());
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
            while (ep.lanes().stream().anyMatch(LaneInfo::live)) {
                assertTrue(System.nanoTime() < deadline, "lanes still live 10 s after the peer closed: " + ep.lanes());
                Thread.sleep(10);
            }
            Throwable t = assertThrows(ExecutionException.class, () -> await(ep.sendActiveMessage(1, null, null)))
                    .getCause();
            assertInstanceOf(EndpointFailedException.class, t, t.toString());
            assertTrue(String.valueOf(t.getMessage()).contains("peer worker " + b.address().workerId() + " closed"),
                    t.getMessage());
        }
    }
}
