package dev.fenceline.transport.shm;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.code_intelligence.jazzer.junit.FuzzTest;
import com.typesafe.config.ConfigFactory;
import dev.fenceline.AtomicOp;
import dev.fenceline.Endpoint;
import dev.fenceline.Fenceline;
import dev.fenceline.MemoryRegion;
import dev.fenceline.RemoteKey;
import dev.fenceline.Worker;
import java.nio.ByteBuffer;
import java.nio.file.Path;
import java.util.concurrent.TimeUnit;
import org.agrona.concurrent.ringbuffer.ManyToOneRingBuffer;
import org.junit.jupiter.api.AfterAll;

/**
 * Coverage-guided fuzzing of what a peer process can write into a worker's inbox: each input is a
 * run of ring records (a type byte, a length byte, that many bytes) of every type, CONNECT and
 * replies included, written into a live worker's ring. After each input the polling thread must
 * have consumed every record (it did not stop or hang), and the worker must still apply an
 * endpoint's atomic exactly once (nothing a record said reached its memory or its lanes).
 */
class InboxFuzzTest {
    private static Fenceline fenceline;
    private static Endpoint endpoint;
    private static RemoteKey key;
    private static MemoryRegion counter;
    private static ManyToOneRingBuffer inbox;
    private static long adds;

    private static synchronized void start() throws Exception {
        if (fenceline != null) {
            return;
        }
        fenceline = Fenceline.create(ConfigFactory.parseString("""
                fenceline.transports = [shm]
                fenceline.transport.shm.idle-strategy = busy-spin
                """));
        Worker a = fenceline.newWorker("a").toCompletableFuture().get(10, TimeUnit.SECONDS);
        Worker b = fenceline.newWorker("b").toCompletableFuture().get(10, TimeUnit.SECONDS);
        counter = b.register(ByteBuffer.allocateDirect(64)); // through b's inbox
        key = a.unpackRemoteKey(counter.remoteKey().toBytes());
        endpoint = a.connect(b.address()).toCompletableFuture().get(10, TimeUnit.SECONDS);
        inbox = Inbox.open(Path.of("/dev/shm", HostileInboxTest.controlOf(b)), true).ring;
    }

    @AfterAll
    static void stop() {
        if (fenceline != null) {
            fenceline.close();
        }
    }

    @FuzzTest(maxExecutions = 1_000_000, maxDuration = "20m")
    void records(byte[] input) throws Exception {
        start();
        int i = 0;
        while (i + 2 <= input.length) {
            int type = input[i] & 0x0F;
            int length = input[i + 1] & 0xFF;
            i += 2;
            byte[] body = new byte[Math.max(1, length)];
            int n = Math.min(length, input.length - i);
            System.arraycopy(input, i, body, 0, n);
            i += n;
            int at = inbox.tryClaim(Math.max(1, type), body.length);
            if (at < 0) {
                break; // full: the rest waits for the next input
            }
            inbox.buffer().putBytes(at, body);
            inbox.commit(at);
        }
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(5);
        while (inbox.consumerPosition() != inbox.producerPosition()) {
            assertTrue(System.nanoTime() < deadline, "the worker's polling thread stopped consuming its inbox");
            Thread.onSpinWait();
        }
        long before = endpoint.atomicFetch64(AtomicOp.ADD, key.baseAddress(), key, 1).toCompletableFuture()
                .get(10, TimeUnit.SECONDS);
        assertEquals(adds++, before, "the worker applies an endpoint's atomic exactly once, whatever came before");
    }
}
