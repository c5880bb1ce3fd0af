package dev.fenceline.transport.sim;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.typesafe.config.ConfigFactory;
import dev.fenceline.AtomicOp;
import dev.fenceline.Endpoint;
import dev.fenceline.Fenceline;
import dev.fenceline.MemoryRegion;
import dev.fenceline.RemoteKey;
import dev.fenceline.Worker;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * The target holds an origin endpoint's exactly-once window while a lane of it lives and lets it go
 * (to linger) when the lane closes: endpoints that come and go do not pile up windows, which would
 * fill the peer's bound and refuse its operations.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class SimWindowsTest {
    @Test
    void aClosedEndpointsWindowIsLetGo() throws Exception {
        try (Fenceline f = Fenceline.create(ConfigFactory.parseString("fenceline.transports = [sim]\n"
                + "fenceline.transport.sim.direct-access = off"))) {
            Worker a = f.newWorker("a").toCompletableFuture().get(10, TimeUnit.SECONDS);
            Worker b = f.newWorker("b").toCompletableFuture().get(10, TimeUnit.SECONDS);
            MemoryRegion region = b.allocate(64);
            RemoteKey key = a.unpackRemoteKey(region.remoteKey().toBytes());
            SimTransport target = SimTransport.of(b.address().workerId());
            assertNotNull(target, "worker b's sim transport");
            int n = 20;
            Endpoint[] eps = new Endpoint[n];
            for (int i = 0; i < n; i++) {
                eps[i] = a.connect(b.address()).toCompletableFuture().get(10, TimeUnit.SECONDS);
                eps[i].atomicFetch64(AtomicOp.ADD, region.address(), key, 1).toCompletableFuture().get(10,
                        TimeUnit.SECONDS);
            }
            assertEquals(n, region.buffer().order(java.nio.ByteOrder.nativeOrder()).getLong(0));
            assertTrue(target.windows().held() >= n, "held while the endpoints live: " + target.windows().held());
            for (Endpoint ep : eps) {
                ep.close().toCompletableFuture().get(10, TimeUnit.SECONDS);
            }
            assertEquals(0, target.windows().held(), "windows still held after every endpoint closed");
        }
    }
}
