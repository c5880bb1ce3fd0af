package dev.fenceline.transport.ucx;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.typesafe.config.ConfigFactory;
import dev.fenceline.CallerProgress;
import dev.fenceline.Endpoint;
import dev.fenceline.Fenceline;
import dev.fenceline.MemoryRegion;
import dev.fenceline.RemoteKey;
import dev.fenceline.Worker;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * {@link Worker#progressHere()} over UCT tcp: the worker's progress agent (the one thread at a time
 * that touches its UCT worker) is lent to the calling thread, so a put, which goes to the target as an
 * active message, is applied only in the borrower's {@code progress()} calls; a ping-pong with both
 * workers lent to one thread; given back, the agents serve again.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class UcxCallerProgressTest {
    @BeforeAll
    static void ucx() {
        UcxAssumptions.ucxAvailable();
    }

    private static <T> T await(CompletionStage<T> s) throws Exception {
        return s.toCompletableFuture().get(20, TimeUnit.SECONDS);
    }

    private static void spin(long millis) { // a borrower that blocks 10 ms or more loses the loan
        for (long until = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(millis); System.nanoTime() - until < 0;) {
            Thread.onSpinWait();
        }
    }

    @Test
    void aLentWorkersUctWorkerIsProgressedOnlyByItsBorrower() throws Exception {
        try (Fenceline fl = Fenceline.create(ConfigFactory.parseString("fenceline.transports = [ucx]\n"
                + "fenceline.transport.ucx.tls = [tcp]\nfenceline.transport.ucx.devices = [lo]\n"
                + "fenceline.transport.ucx.tcp-unchecked-writes = accept\n"))) {
            Worker a = await(fl.newWorker("a"));
            Worker b = await(fl.newWorker("b"));
            MemoryRegion atA = a.allocate(64);
            MemoryRegion atB = b.allocate(64);
            Endpoint ab = await(a.connect(b.address()));
            Endpoint ba = await(b.connect(a.address()));
            RemoteKey keyB = a.unpackRemoteKey(atB.remoteKey().toBytes());
            RemoteKey keyA = b.unpackRemoteKey(atA.remoteKey().toBytes());
            ByteBuffer ping = ByteBuffer.allocateDirect(8).order(ByteOrder.nativeOrder());
            ByteBuffer pong = ByteBuffer.allocateDirect(8).order(ByteOrder.nativeOrder());
            ByteBuffer seenAtA = atA.buffer().order(ByteOrder.nativeOrder());
            ByteBuffer seenAtB = atB.buffer().order(ByteOrder.nativeOrder());
            await(ab.put(ping.putLong(0, 1), atB.address(), keyB));

            try (CallerProgress pb = b.progressHere()) {
                CompletableFuture<Void> put = ab.put(ping.putLong(0, 2), atB.address(), keyB).toCompletableFuture();
                spin(200);
                assertEquals(1, seenAtB.getLong(0), "nothing progresses b's UCT worker but its borrower's polls");
                assertFalse(put.isDone());
                long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
                while (!put.isDone()) {
                    assertTrue(System.nanoTime() - deadline < 0, "the put is applied by b's borrower's polls");
                    pb.progress();
                }
                await(put);
                assertEquals(2, seenAtB.getLong(0));
            }
            try (CallerProgress pa = a.progressHere(); CallerProgress pb = b.progressHere()) {
                for (long i = 3; i <= 500; i++) {
                    ab.put(ping.putLong(0, i), atB.address(), keyB);
                    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
                    while (seenAtB.getLong(0) != i) {
                        assertTrue(System.nanoTime() - deadline < 0, "ping " + i + " not seen");
                        pb.progress();
                        pa.progress();
                    }
                    ba.put(pong.putLong(0, i), atA.address(), keyA);
                    while (seenAtA.getLong(0) != i) {
                        assertTrue(System.nanoTime() - deadline < 0, "pong " + i + " not seen");
                        pa.progress();
                        pb.progress();
                    }
                }
            }
            // Given back: the agents' own threads serve again.
            await(ab.flush());
            await(ba.flush());
            await(ab.put(ping.putLong(0, 1_000), atB.address(), keyB));
            assertEquals(1_000, seenAtB.getLong(0));
        }
    }
}
