package dev.fenceline.transport.ucx;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.typesafe.config.ConfigFactory;
import dev.fenceline.AtomicOp;
import dev.fenceline.Endpoint;
import dev.fenceline.Fenceline;
import dev.fenceline.LaneType;
import dev.fenceline.MemoryRegion;
import dev.fenceline.RemoteKey;
import dev.fenceline.Worker;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.EnumSet;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * What goes through UCT's hardware path is one-sided: with the target's progress thread held inside
 * an active-message handler, puts, gets and atomics on its shared memory (posix) and bulk transfers
 * into its registered memory (cma) complete, while an operation that needs the target (a message,
 * memory its shared-memory transport does not reach) waits until the thread is let go.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class UcxOneSidedTest {
    @BeforeAll
    static void ucx() {
        UcxAssumptions.ucxAvailable();
    }

    @Test
    void hardwareOperationsNeedNoTargetThread() throws Exception {
        try (Fenceline f = Fenceline.create(ConfigFactory.parseString(
                "fenceline.transports = [ucx]\nfenceline.transport.ucx.tls = [posix, cma]"))) {
            Worker a = await(f.newWorker("a"));
            Worker b = await(f.newWorker("b"));
            CountDownLatch inside = new CountDownLatch(1);
            CountDownLatch release = new CountDownLatch(1);
            b.setActiveMessageHandler(7, (header, payload) -> {
                inside.countDown();
                try {
                    release.await(30, TimeUnit.SECONDS); // holds b's progress thread
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
            });
            MemoryRegion shared = b.allocate(1 << 20);
            MemoryRegion registered = b.register(ByteBuffer.allocateDirect(1 << 20));
            RemoteKey sk = a.unpackRemoteKey(shared.remoteKey().toBytes());
            RemoteKey rk = a.unpackRemoteKey(registered.remoteKey().toBytes());
            Endpoint blocker = await(a.connect(b.address()));
            Endpoint ep = await(a.connect(b.address()));
            assertEquals(List.of(EnumSet.of(LaneType.AM, LaneType.RMA, LaneType.AMO), EnumSet.of(LaneType.RMA_BW)),
                    ep.lanes().stream().map(l -> EnumSet.copyOf(l.types())).toList(), ep.lanes()::toString);
            CompletableFuture<Void> held = blocker.sendActiveMessage(7, ByteBuffer.allocate(0), ByteBuffer.allocate(0))
                    .toCompletableFuture();
            assertTrue(inside.await(10, TimeUnit.SECONDS), "the handler runs");
            try {
                await(ep.put(ByteBuffer.wrap(new byte[] {1, 2, 3}), shared.address() + 8, sk));
                assertEquals(41, (long) await(ep.atomicFetch64(AtomicOp.ADD, shared.address() + 64, sk, 41)) + 41);
                ByteBuffer back = ByteBuffer.allocateDirect(3);
                await(ep.get(back, shared.address() + 8, sk));
                assertEquals(2, back.get(1));
                ByteBuffer bulk = ByteBuffer.allocateDirect(256 << 10);
                for (int i = 0; i < bulk.capacity(); i++) {
                    bulk.put(i, (byte) (i * 31));
                }
                await(ep.put(bulk, registered.address(), rk)); // large: the cma lane, into registered memory
                await(ep.flush());
                assertEquals((byte) (1000 * 31), registered.buffer().get(1000));
                assertEquals(3, shared.buffer().get(10));
                assertEquals(41, shared.buffer().order(ByteOrder.nativeOrder()).getLong(64));
                CompletableFuture<Void> small = ep.put(ByteBuffer.wrap(new byte[] {9}), registered.address(), rk)
                        .toCompletableFuture(); // small, on posix: memory posix does not reach, so a message
                Thread.sleep(200);
                assertFalse(small.isDone(), "a message waits for the target's thread");
                release.countDown();
                await(small);
                assertEquals(9, registered.buffer().get(0));
                await(held);
            } finally {
                release.countDown();
            }
        }
    }

    private static <T> T await(java.util.concurrent.CompletionStage<T> s) throws Exception {
        return s.toCompletableFuture().get(20, TimeUnit.SECONDS);
    }
}
