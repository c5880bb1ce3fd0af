package dev.fenceline.testkit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.fenceline.Endpoint;
import dev.fenceline.Fenceline;
import dev.fenceline.MemoryRegion;
import dev.fenceline.Worker;
import dev.fenceline.WorkerStatistics;
import java.nio.ByteBuffer;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** A worker forgets an endpoint once it is closed, and keeps its counts. */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class ClosedEndpointTest {
    @Test
    void aClosedEndpointIsForgottenAndItsCountsStay() throws Exception {
        try (Fenceline f = Fenceline.create(SimConfigs.of(SimConfigs.lanes("two-lanes"), "endpoint", 7))) {
            Worker a = f.newWorker("a").toCompletableFuture().get(10, TimeUnit.SECONDS);
            Worker b = f.newWorker("b").toCompletableFuture().get(10, TimeUnit.SECONDS);
            MemoryRegion region = b.allocate(4096);
            for (int round = 0; round < 3; round++) {
                Endpoint ep = a.connect(b.address()).toCompletableFuture().get(10, TimeUnit.SECONDS);
                for (int i = 0; i < 10; i++) {
                    ep.put(ByteBuffer.allocate(8), region.address() + 8L * i, region.remoteKey());
                }
                ep.flush().toCompletableFuture().get(10, TimeUnit.SECONDS);
                assertEquals(1, a.statistics().openEndpoints());
                ep.close().toCompletableFuture().get(10, TimeUnit.SECONDS);
            }
            WorkerStatistics s = a.statistics();
            assertEquals(0, s.openEndpoints(), s.toString());
            assertEquals(3, s.endpoints(), "endpoints ever created");
            assertEquals(30, s.operations(), s.toString());
            assertEquals(30, s.completed(), s.toString());
            assertTrue(s.flushes() >= 3, s.toString());
        }
    }
}
