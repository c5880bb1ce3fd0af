package dev.fenceline.transport.ucx;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.typesafe.config.ConfigFactory;
import dev.fenceline.Endpoint;
import dev.fenceline.Fenceline;
import dev.fenceline.Worker;
import dev.fenceline.WorkerAddress;
import java.util.Map;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Workers whose wire protocols differ (different Fenceline releases) do not talk: the origin's
 * connect fails at once, naming both versions, instead of timing out on a CONNECT the target cannot
 * read; and the origin goes on serving connects to a peer it can talk to.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class UcxProtocolVersionTest {
    @BeforeAll
    static void ucx() {
        UcxAssumptions.ucxAvailable();
    }

    @Test
    void aPeerOfAnotherProtocolVersionIsRefusedAtOnceAndNamed() throws Exception {
        try (Fenceline f = Fenceline.create(ConfigFactory.parseString("fenceline.transports = [ucx]\n"
                + "fenceline.transport.ucx { tls = [posix], connect-timeout = 30s }"))) {
            Worker origin = f.newWorker("origin").toCompletableFuture().get(20, TimeUnit.SECONDS);
            Worker target = f.newWorker("target").toCompletableFuture().get(20, TimeUnit.SECONDS);
            byte[] ucx = target.address().transportAddress("ucx");
            assertEquals(UcxWireup.VERSION, ucx[0], "the address opens with the protocol version");
            ucx[0] = (byte) (UcxWireup.VERSION - 1);
            WorkerAddress older = new WorkerAddress(target.address().workerId(), target.address().name(),
                    Map.of("ucx", ucx));
            long start = System.nanoTime();
            Throwable refused = assertThrows(ExecutionException.class,
                    () -> origin.connect(older).toCompletableFuture().get(20, TimeUnit.SECONDS)).getCause();
            long tookMs = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start);
            String why = String.valueOf(refused.getMessage());
            assertTrue(why.contains("of version " + (UcxWireup.VERSION - 1) + ", this worker's of " + UcxWireup.VERSION),
                    refused.toString());
            assertTrue(tookMs < 10_000, "refused after " + tookMs + " ms: the connect timed out instead");
            Endpoint ep = origin.connect(target.address()).toCompletableFuture().get(20, TimeUnit.SECONDS);
            assertEquals(1, ep.lanes().size(), "a peer of this version still connects");
        }
    }
}
