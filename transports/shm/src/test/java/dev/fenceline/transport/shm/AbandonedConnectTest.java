package dev.fenceline.transport.shm;

import static org.junit.jupiter.api.Assertions.assertThrows;

import com.typesafe.config.ConfigFactory;
import dev.fenceline.Fenceline;
import dev.fenceline.Worker;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * A connect given up (its answer did not come within the connect timeout) tells the peer to forget
 * the connection: a peer that took the CONNECT and answered late would otherwise hold it, and the
 * origin's exactly-once window with it, until this process ends.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class AbandonedConnectTest {
    @Test
    void aConnectThatTimedOutIsFollowedByABye() throws Exception {
        try (Fenceline f = Fenceline.create(ConfigFactory.parseString("""
                fenceline.transports = [shm]
                fenceline.transport.shm.cma = off
                fenceline.transport.shm.connect-timeout = 300ms
                """));
                FakeShmPeer fake = FakeShmPeer.create(64 << 10)) {
            Worker a = f.newWorker("a").toCompletableFuture().get(10, TimeUnit.SECONDS);
            CompletableFuture<?> connecting = a.connect(fake.address()).toCompletableFuture();
            long conn = fake.await(m -> m.type() == ShmWire.CONNECT, "a's CONNECT").getLong(0);
            assertThrows(ExecutionException.class, () -> connecting.get(10, TimeUnit.SECONDS),
                    "the connect is never answered");
            fake.await(m -> m.type() == ShmWire.BYE && m.getLong(0) == conn, "a BYE for the abandoned connection");
        }
    }
}
