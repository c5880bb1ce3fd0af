package dev.fenceline.testkit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.typesafe.config.ConfigFactory;
import dev.fenceline.EndpointClosedException;
import dev.fenceline.Fenceline;
import dev.fenceline.Worker;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import org.apache.pekko.actor.testkit.typed.javadsl.ActorTestKit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * A worker that finishes starting after its runtime closed (the runtime on the user's own actor
 * system, which stays up) is closed and refused: it escaped the close, open, among the runtime's
 * workers.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class ClosingRuntimeTest {
    @Test
    void aWorkerThatStartsWhileTheRuntimeClosesIsClosedAndRefused() throws Exception {
        GatedTransportProvider.arm();
        ActorTestKit kit = ActorTestKit.create("closing", ConfigFactory.parseString(
                "fenceline.transports = [gated]\nfenceline.jmx.enabled = off").withFallback(ConfigFactory.load()));
        try {
            Fenceline f = Fenceline.get(kit.system());
            CompletableFuture<CompletionStage<Worker>> starting = CompletableFuture.supplyAsync(
                    () -> f.newWorker("late"));
            assertTrue(GatedTransportProvider.entered.await(10, TimeUnit.SECONDS), "the worker's start is at the gate");
            f.closeAsync().toCompletableFuture().get(30, TimeUnit.SECONDS);
            GatedTransportProvider.gate.countDown();
            CompletableFuture<Worker> late = starting.get(30, TimeUnit.SECONDS).toCompletableFuture();
            ExecutionException e = assertThrows(ExecutionException.class, () -> late.get(30, TimeUnit.SECONDS));
            assertInstanceOf(EndpointClosedException.class, e.getCause(), String.valueOf(e.getCause()));
            assertTrue(e.getCause().getMessage().contains("closed while worker 'late' started"),
                    e.getCause().getMessage());
            long until = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
            while (!f.workers().isEmpty() && System.nanoTime() < until) {
                Thread.sleep(10); // its close completes on the actor system's threads
            }
            assertEquals(List.of(), f.workers(), "no worker outlives the runtime's close");
        } finally {
            GatedTransportProvider.disarm();
            kit.shutdownTestKit();
        }
    }
}
