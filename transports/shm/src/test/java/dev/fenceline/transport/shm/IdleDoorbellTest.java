package dev.fenceline.transport.shm;

import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import com.typesafe.config.ConfigFactory;
import dev.fenceline.Endpoint;
import dev.fenceline.Fenceline;
import dev.fenceline.Worker;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.MappedByteBuffer;
import java.nio.file.Path;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * An idle worker's polling thread sleeps on its inbox's doorbell, and a message to it rings it
 * awake. With liveness-interval at a minute the sleep's own bound is a minute, so a message handled
 * within seconds was rung for, not found by a timed look.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class IdleDoorbellTest {
    @Test
    void anIdlePollingThreadSleepsUntilAMessageRingsIt() throws Exception {
        assumeTrue(Doorbell.available(), () -> "no futexes here: " + Futex.unavailable());
        try (Fenceline f = Fenceline.create(ConfigFactory.parseString("fenceline.transports = [shm]\n"
                + "fenceline.transport.shm.idle-strategy = doorbell\n"
                + "fenceline.transport.shm.liveness-interval = 1m\n"
                + "fenceline.endpoint.keepalive.interval = 0"))) {
            Worker a = f.newWorker("a").toCompletableFuture().get(10, TimeUnit.SECONDS);
            Worker b = f.newWorker("b").toCompletableFuture().get(10, TimeUnit.SECONDS);
            Endpoint ep = b.connect(a.address()).toCompletableFuture().get(10, TimeUnit.SECONDS);
            ShmAddress at = ShmAddress.decode(a.address().transportAddress(ShmTransportProvider.NAME));
            MappedByteBuffer control = Segments.open(Path.of("/dev/shm").resolve(at.control()), true);
            control.order(ByteOrder.nativeOrder());
            for (int round = 0; round < 3; round++) {
                long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
                while (control.getInt(Doorbell.ASLEEP) != 1) {
                    assertTrue(System.nanoTime() < deadline, "worker a's polling thread went to sleep on its doorbell");
                    Thread.sleep(5);
                }
                CountDownLatch handled = new CountDownLatch(1);
                a.setActiveMessageHandler(7, (header, payload) -> handled.countDown());
                ep.sendActiveMessage(7, ByteBuffer.allocate(0), ByteBuffer.allocate(8)).toCompletableFuture()
                        .get(10, TimeUnit.SECONDS);
                assertTrue(handled.await(10, TimeUnit.SECONDS), "the message woke the sleeping polling thread");
                ep.flush().toCompletableFuture().get(10, TimeUnit.SECONDS); // and its answer woke b's
            }
        }
    }
}
