package dev.fenceline.transport.sim;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.typesafe.config.ConfigFactory;
import dev.fenceline.Fenceline;
import dev.fenceline.Worker;
import dev.fenceline.spi.TransportOp;
import java.nio.ByteBuffer;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * A sim target runs an active message's handler without its origin's exactly-once window locked,
 * as the other transports do: the window is the worker's, shared by every lane and transport that
 * carries the origin, and a handler that takes its time must not stop the origin's next operation
 * from being applied on another lane meanwhile.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class SimHandlerOutsideWindowTest {
    @Test
    void aSlowHandlerDoesNotHoldItsOriginsWindow() throws Exception {
        try (Fenceline f = Fenceline.create(ConfigFactory.parseString("fenceline.transports = [sim]"))) {
            Worker a = f.newWorker("a").toCompletableFuture().get(10, TimeUnit.SECONDS);
            Worker b = f.newWorker("b").toCompletableFuture().get(10, TimeUnit.SECONDS);
            CountDownLatch entered = new CountDownLatch(1);
            CountDownLatch release = new CountDownLatch(1);
            CountDownLatch quickRan = new CountDownLatch(1);
            b.setActiveMessageHandler(5, (h, p) -> {
                entered.countDown();
                try {
                    release.await(20, TimeUnit.SECONDS);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
            });
            b.setActiveMessageHandler(6, (h, p) -> quickRan.countDown());
            SimTransport target = SimTransport.of(b.address().workerId());
            assertNotNull(target, "worker b's sim transport");
            // Two lanes of one origin endpoint (77) deliver through the same window of worker b.
            SimWindowHold first = new SimWindowHold(target.windows(), "b");
            SimWindowHold second = new SimWindowHold(target.windows(), "b");
            TransportOp slow = TransportOp.activeMessage(1, 5, ByteBuffer.allocate(0), ByteBuffer.allocate(8))
                    .identify(77, 0, 0);
            TransportOp quick = TransportOp.activeMessage(2, 6, ByteBuffer.allocate(0), ByteBuffer.allocate(8))
                    .identify(77, 1, 0);
            CompletableFuture<Long> slowApplied = CompletableFuture.supplyAsync(
                    () -> target.applyOnce(first, a.address().workerId(), slow, target.target()));
            try {
                assertTrue(entered.await(10, TimeUnit.SECONDS), "the slow handler runs");
                CompletableFuture<Long> quickApplied = CompletableFuture.supplyAsync(
                        () -> target.applyOnce(second, a.address().workerId(), quick, target.target()));
                assertTrue(quickRan.await(10, TimeUnit.SECONDS),
                        "the next message of the origin was applied while the first's handler ran");
                assertEquals(0L, quickApplied.get(10, TimeUnit.SECONDS));
                assertTrue(!slowApplied.isDone(), "the slow handler still runs");
            } finally {
                release.countDown();
            }
            assertEquals(0L, slowApplied.get(10, TimeUnit.SECONDS));
            first.close();
            second.close();
        }
    }
}
