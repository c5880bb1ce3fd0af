package dev.fenceline.transport.tcp;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.typesafe.config.ConfigFactory;
import dev.fenceline.AtomicOp;
import dev.fenceline.Endpoint;
import dev.fenceline.Fenceline;
import dev.fenceline.MemoryRegion;
import dev.fenceline.RemoteKey;
import dev.fenceline.Worker;
import java.nio.ByteBuffer;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * An active-message handler that blocks holds up only its own connection: on a target with one
 * event loop, another endpoint's operations and keepalive probes are answered meanwhile (its 1 s
 * keepalive timeout never fires while the handler blocks for 3 s), and the blocked connection's
 * later frames wait behind the message, in order, and go on when it returns.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class TcpBlockingHandlerTest {
    private static <T> T await(CompletionStage<T> s) throws Exception {
        return s.toCompletableFuture().get(30, TimeUnit.SECONDS);
    }

    @Test
    void aBlockingHandlerHoldsUpOnlyItsOwnConnection() throws Exception {
        CountDownLatch release = new CountDownLatch(1);
        CountDownLatch entered = new CountDownLatch(1);
        try (Fenceline targets = Fenceline.create(TcpConfigs.loopback("127.0.0.1:0"));
                Fenceline patient = Fenceline.create(ConfigFactory.parseString(
                        "fenceline.endpoint.keepalive { interval = 100ms, timeout = 20s }")
                        .withFallback(TcpConfigs.loopback("127.0.0.1:0")));
                Fenceline strict = Fenceline.create(ConfigFactory.parseString(
                        "fenceline.endpoint.keepalive { interval = 100ms, timeout = 1s }")
                        .withFallback(TcpConfigs.loopback("127.0.0.1:0")))) {
            Worker target = await(targets.newWorker("target"));
            MemoryRegion region = target.allocate(4096);
            target.setActiveMessageHandler(5, (header, payload) -> {
                entered.countDown();
                try {
                    release.await(20, TimeUnit.SECONDS); // a handler that blocks (on a lock, a call, a queue)
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
            });
            Worker a = await(patient.newWorker("a"));
            Worker b = await(strict.newWorker("b"));
            Endpoint blocked = await(a.connect(target.address()));
            Endpoint other = await(b.connect(target.address()));
            RemoteKey keyA = a.unpackRemoteKey(region.remoteKey().toBytes());
            RemoteKey keyB = b.unpackRemoteKey(region.remoteKey().toBytes());

            CompletableFuture<Void> message = blocked.sendActiveMessage(5, ByteBuffer.allocate(0),
                    ByteBuffer.allocate(8)).toCompletableFuture();
            CompletableFuture<Void> behind = blocked.put(ByteBuffer.wrap(new byte[] {42}), region.address() + 100,
                    keyA).toCompletableFuture();
            assertTrue(entered.await(10, TimeUnit.SECONDS), "the handler runs");
            long blockedAt = System.nanoTime();
            int adds = 0;
            while (System.nanoTime() - blockedAt < TimeUnit.SECONDS.toNanos(3)) {
                long before = await(other.atomicFetch64(AtomicOp.ADD, region.address(), keyB, 1));
                assertEquals(adds++, before, "the other endpoint is served while the handler blocks");
                await(other.flush());
            }
            assertTrue(other.lanes().get(0).live(), "the other endpoint's lane stayed live: " + other.lanes());
            assertEquals(0, b.statistics().reconfigurations(), b.statistics().toString());
            assertEquals(0, region.buffer().get(100), "the put behind the message waits for it, in order");
            assertTrue(!message.isDone() && !behind.isDone());

            release.countDown();
            await(message);
            await(behind);
            assertEquals(42, region.buffer().get(100));
            await(blocked.sendActiveMessage(5, ByteBuffer.allocate(0), ByteBuffer.allocate(8)));
            assertEquals(0, a.statistics().failed(), a.statistics().toString());
            assertEquals(0, b.statistics().failed(), b.statistics().toString());
            System.out.printf("TcpBlockingHandlerTest: %d fetch-adds and flushes served to another endpoint while"
                    + " a handler blocked for 3 s%n", adds);
        }
    }
}
