package dev.fenceline.transport.shm;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.typesafe.config.ConfigFactory;
import dev.fenceline.CallerProgress;
import dev.fenceline.Endpoint;
import dev.fenceline.Fenceline;
import dev.fenceline.Worker;
import java.nio.ByteBuffer;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * {@link Worker#progressHere()} over shm: the worker's inbox is polled by its progress agent, which
 * is lent to the calling thread: an active message to a lent worker is read only in that thread's
 * {@code progress()} calls, and by its own thread again once given back.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class ShmCallerProgressTest {
    private static final String SHM = "fenceline.transports = [shm]\nfenceline.transport.shm.cma = off\n";

    private static <T> T await(CompletionStage<T> s) throws Exception {
        return s.toCompletableFuture().get(30, TimeUnit.SECONDS);
    }

    @Test
    void aLentWorkersInboxIsReadOnlyByItsBorrowersPolls() throws Exception {
        try (Fenceline fl = Fenceline.create(ConfigFactory.parseString(SHM))) {
            Worker a = await(fl.newWorker("a"));
            Worker b = await(fl.newWorker("b"));
            AtomicInteger handled = new AtomicInteger();
            b.setActiveMessageHandler(7, (header, payload) -> {
                handled.incrementAndGet();
            });
            Endpoint ab = await(a.connect(b.address()));
            await(ab.sendActiveMessage(7, ByteBuffer.allocate(0), ByteBuffer.allocate(8)));
            assertEquals(1, handled.get());

            CallerProgress atB = b.progressHere();
            try {
                CompletableFuture<Void> message = ab.sendActiveMessage(7, ByteBuffer.allocate(0),
                        ByteBuffer.allocate(8)).toCompletableFuture();
                // Spinning, not sleeping: a borrower that blocks 10 ms or more loses the loan.
                for (long until = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(200);
                        System.nanoTime() - until < 0;) {
                    Thread.onSpinWait();
                }
                assertEquals(1, handled.get(), "nothing reads b's inbox but its borrower's polls");
                assertFalse(message.isDone());
                long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
                while (!message.isDone()) {
                    assertTrue(System.nanoTime() - deadline < 0, "the message is read by b's borrower's polls");
                    atB.progress();
                }
                await(message);
                assertEquals(2, handled.get());
            } finally {
                atB.close();
            }
            // Given back: b's own thread reads its inbox again.
            await(ab.sendActiveMessage(7, ByteBuffer.allocate(0), ByteBuffer.allocate(8)));
            assertEquals(3, handled.get());
        }
    }

    /** Taken right after the worker is made, the loan holds its progress agent too (the actor starts it later). */
    @Test
    void aWorkerJustMadeLendsItsAgents() throws Exception {
        try (Fenceline fl = Fenceline.create(ConfigFactory.parseString(SHM))) {
            Worker a = await(fl.newWorker("a"));
            Worker b = await(fl.newWorker("b"));
            AtomicInteger handled = new AtomicInteger();
            b.setActiveMessageHandler(7, (header, payload) -> handled.incrementAndGet());
            try (CallerProgress atB = b.progressHere()) {
                CompletableFuture<Void> sent = CompletableFuture.runAsync(() -> {
                    try {
                        Endpoint ab = await(a.connect(b.address()));
                        await(ab.sendActiveMessage(7, ByteBuffer.allocate(0), ByteBuffer.allocate(8)));
                    } catch (Exception e) {
                        throw new java.util.concurrent.CompletionException(e);
                    }
                });
                long quietUntil = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(300);
                while (System.nanoTime() - quietUntil < 0) { // not polling, not blocking
                    Thread.onSpinWait();
                }
                assertEquals(0, handled.get(), "b's inbox waits for its borrower's polls");
                long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
                while (!sent.isDone()) {
                    assertTrue(System.nanoTime() - deadline < 0, "connected and sent while b's borrower polls");
                    atB.progress();
                }
                sent.get();
                assertEquals(1, handled.get());
            }
        }
    }
}
