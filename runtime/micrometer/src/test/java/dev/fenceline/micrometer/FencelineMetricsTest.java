package dev.fenceline.micrometer;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.typesafe.config.ConfigFactory;
import dev.fenceline.Endpoint;
import dev.fenceline.Fenceline;
import dev.fenceline.MemoryRegion;
import dev.fenceline.Worker;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** The binder's meters follow a worker's figures, its endpoints and their lanes. */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class FencelineMetricsTest {
    /** Two sim lanes with a delay, so large puts take the bulk lane rather than the fast path. */
    private static final String LANES = "fenceline.transports = [sim]\n"
            + "fenceline.transport.sim.lanes = ["
            + "{ types = [AM, RMA, AMO], min-delay = 0us, max-delay = 30us },"
            + "{ types = [AM, RMA, RMA_BW, AMO], min-delay = 0us, max-delay = 30us } ]";

    @Test
    void workerEndpointAndLaneMetersFollowTheWorker() throws Exception {
        SimpleMeterRegistry registry = new SimpleMeterRegistry();
        try (Fenceline f = Fenceline.create(ConfigFactory.parseString(LANES))) {
            Worker a = f.newWorker("a").toCompletableFuture().get(10, TimeUnit.SECONDS);
            Worker b = f.newWorker("b").toCompletableFuture().get(10, TimeUnit.SECONDS);
            try (FencelineMetrics metrics = new FencelineMetrics(a, Duration.ofHours(1))) {
                metrics.bindTo(registry);
                assertEquals(0.0, registry.get("fenceline.endpoints.open").gauge().value());
                MemoryRegion region = b.allocate(1 << 20);
                Endpoint ep = a.connect(b.address()).toCompletableFuture().get(10, TimeUnit.SECONDS);
                for (int i = 0; i < 5; i++) {
                    ep.put(ByteBuffer.allocate(1 << 16), region.address(), region.remoteKey()); // the bulk lane
                }
                ep.flush().toCompletableFuture().get(10, TimeUnit.SECONDS);
                assertEquals(5.0, registry.get("fenceline.operations").tag("outcome", "issued").functionCounter()
                        .count());
                assertEquals(5.0, registry.get("fenceline.operations").tag("outcome", "completed").functionCounter()
                        .count());
                assertEquals(1.0, registry.get("fenceline.endpoints.open").gauge().value());
                metrics.refresh();
                assertEquals(5.0, registry.get("fenceline.endpoint.operations").tag("peer", "b").gauge().value());
                assertEquals(5.0 * (1 << 16), registry.get("fenceline.lane.bytes").tag("lane", "1").gauge().value());
                assertEquals(1.0, registry.get("fenceline.lane.live").tag("lane", "0").tag("transport", "sim")
                        .gauge().value());
                assertNotNull(registry.find("fenceline.endpoint.flush.p99").gauge());
                ep.close().toCompletableFuture().get(10, TimeUnit.SECONDS);
                metrics.refresh();
                assertTrue(registry.find("fenceline.endpoint.operations").gauges().isEmpty(),
                        "a closed endpoint's meters go");
                assertEquals(5.0, registry.get("fenceline.operations").tag("outcome", "issued").functionCounter()
                        .count(), "its counts stay in the worker's");
            }
        }
    }

    /**
     * Closing the binder takes its meters out of the registry: no rows of a closed worker's
     * endpoints stay, and a worker made again under the same name is measured, not the old one.
     */
    @Test
    void closingTakesTheMetersOutSoAWorkerOfTheSameNameIsMeasuredAfresh() throws Exception {
        SimpleMeterRegistry registry = new SimpleMeterRegistry();
        try (Fenceline f = Fenceline.create(ConfigFactory.parseString(LANES))) {
            Worker a = f.newWorker("a").toCompletableFuture().get(10, TimeUnit.SECONDS);
            Worker b = f.newWorker("b").toCompletableFuture().get(10, TimeUnit.SECONDS);
            MemoryRegion region = b.allocate(1 << 20);
            FencelineMetrics metrics = new FencelineMetrics(a, Duration.ofHours(1));
            metrics.bindTo(registry);
            Endpoint ep = a.connect(b.address()).toCompletableFuture().get(10, TimeUnit.SECONDS);
            ep.put(ByteBuffer.allocate(64), region.address(), region.remoteKey());
            ep.flush().toCompletableFuture().get(10, TimeUnit.SECONDS);
            metrics.refresh();
            assertEquals(1.0, registry.get("fenceline.endpoint.operations").gauge().value());
            a.close().toCompletableFuture().get(10, TimeUnit.SECONDS);
            metrics.close();
            assertTrue(registry.getMeters().isEmpty(), "left behind: " + registry.getMeters().stream()
                    .map(m -> m.getId().toString()).toList());

            Worker again = f.newWorker("a").toCompletableFuture().get(10, TimeUnit.SECONDS);
            try (FencelineMetrics next = new FencelineMetrics(again, Duration.ofHours(1))) {
                next.bindTo(registry);
                assertEquals(0.0, registry.get("fenceline.operations").tag("outcome", "issued").functionCounter()
                        .count(), "the new worker's count, not the closed one's");
            }
        }
    }
}
