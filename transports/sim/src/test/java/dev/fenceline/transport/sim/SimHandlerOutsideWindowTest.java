package dev.fenceline.transport.sim;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.typesafe.config.ConfigFactory;
import dev.fenceline.Fenceline;
import dev.fenceline.OutcomeUnknownException;
import dev.fenceline.Worker;
import dev.fenceline.spi.TransportOp;
import java.nio.ByteBuffer;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * A sim target runs an active message's handler without its origin's exactly-once window locked,
 * as shm, tcp and UCT do. The window is the worker's, shared by every transport that carries the
 * origin endpoint: while a handler takes its time, the origin's next operation arriving over
 * another of the worker's transports (here a second thread applying through the same window, as
 * that transport's thread would) is applied, and a copy of the running message is refused as of
 * unknown outcome at once, never run twice; after the handler, a copy gets the recorded result.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class SimHandlerOutsideWindowTest {
    @Test
    void aSlowHandlerDoesNotHoldItsOriginsWindow() throws Exception {
        ExecutorService appliers = Executors.newFixedThreadPool(2);
        try (Fenceline f = Fenceline.create(ConfigFactory.parseString("fenceline.transports = [sim]"))) {
            Worker a = f.newWorker("a").toCompletableFuture().get(10, TimeUnit.SECONDS);
            Worker b = f.newWorker("b").toCompletableFuture().get(10, TimeUnit.SECONDS);
            CountDownLatch entered = new CountDownLatch(1);
            CountDownLatch release = new CountDownLatch(1);
            CountDownLatch quickRan = new CountDownLatch(1);
            AtomicInteger slowRuns = new AtomicInteger();
            b.setActiveMessageHandler(5, (h, p) -> {
                slowRuns.incrementAndGet();
                entered.countDown();
                try {
                    release.await(50, TimeUnit.SECONDS); // released in finally below, whatever fails
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
            });
            b.setActiveMessageHandler(6, (h, p) -> quickRan.countDown());
            SimTransport target = SimTransport.of(b.address().workerId());
            assertNotNull(target, "worker b's sim transport");
            UUID origin = a.address().workerId();
            // Two deliveries of origin endpoint 77 through the same window of worker b.
            SimWindowHold first = new SimWindowHold(target.windows(), "b");
            SimWindowHold second = new SimWindowHold(target.windows(), "b");
            CompletableFuture<Long> slowApplied = CompletableFuture.supplyAsync(
                    () -> target.applyOnce(first, origin, message(1, 5, 0), target.target()), appliers);
            CompletableFuture<Long> quickApplied = null;
            try {
                assertTrue(entered.await(10, TimeUnit.SECONDS), "the slow handler runs");
                quickApplied = CompletableFuture.supplyAsync(
                        () -> target.applyOnce(second, origin, message(2, 6, 1), target.target()), appliers);
                assertTrue(quickRan.await(10, TimeUnit.SECONDS),
                        "the origin's next message was applied while the first's handler ran");
                assertEquals(0L, quickApplied.get(10, TimeUnit.SECONDS));
                assertThrows(OutcomeUnknownException.class,
                        () -> target.applyOnce(second, origin, message(3, 5, 0), target.target()),
                        "a copy of the running message is refused, its outcome not known yet");
                assertFalse(slowApplied.isDone(), "the slow handler still runs");
                release.countDown();
                assertEquals(0L, slowApplied.get(10, TimeUnit.SECONDS));
                assertEquals(0L, target.applyOnce(second, origin, message(4, 5, 0), target.target()),
                        "a copy after the handler gets the first one's result");
                assertEquals(1, slowRuns.get(), "the handler ran once for its three copies");
            } finally {
                release.countDown();
                drain(slowApplied);
                drain(quickApplied);
                first.close();
                second.close();
            }
        } finally {
            appliers.shutdownNow();
        }
    }

    private static TransportOp message(long token, int id, long sequence) {
        return TransportOp.activeMessage(token, id, ByteBuffer.allocate(0), ByteBuffer.allocate(8))
                .identify(77, sequence, 0);
    }

    /** Waits for an applier, if started, so that none runs on while the worker closes. */
    private static void drain(CompletableFuture<Long> applied) throws InterruptedException {
        if (applied == null) {
            return;
        }
        try {
            applied.get(20, TimeUnit.SECONDS);
        } catch (ExecutionException | java.util.concurrent.TimeoutException e) {
            // the assertions report what went wrong; this only keeps the close behind it
        }
    }
}
