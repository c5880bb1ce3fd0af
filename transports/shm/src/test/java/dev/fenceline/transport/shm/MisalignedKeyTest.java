package dev.fenceline.transport.shm;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.typesafe.config.ConfigFactory;
import dev.fenceline.AtomicOp;
import dev.fenceline.Endpoint;
import dev.fenceline.Fenceline;
import dev.fenceline.MemoryRegion;
import dev.fenceline.RemoteAccessException;
import dev.fenceline.RemoteAccessException.Reason;
import dev.fenceline.RemoteKey;
import dev.fenceline.Worker;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.Map;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * A key is its owner's word: one whose base address is off by four turns an aligned address into a
 * misaligned offset in the mapping. An atomic through it is refused as misaligned, by the calling
 * thread and by the endpoint actor alike, writes nothing, and the endpoint goes on serving.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class MisalignedKeyTest {
    private static <T> T await(CompletionStage<T> s) throws Exception {
        return s.toCompletableFuture().get(10, TimeUnit.SECONDS);
    }

    @Test
    void anAtomicThroughAKeyWhoseBaseIsMisalignedIsRefusedAndWritesNothing() throws Exception {
        try (Fenceline f = Fenceline.create(ConfigFactory.parseString("fenceline.transports = [shm]"))) {
            Worker a = await(f.newWorker("a"));
            Worker b = await(f.newWorker("b"));
            MemoryRegion region = b.allocate(4096);
            RemoteKey key = a.unpackRemoteKey(region.remoteKey().toBytes());
            RemoteKey shifted = new RemoteKey(key.ownerId(), key.keyId(), key.baseAddress() - 4, key.length() + 4,
                    Map.of("shm", key.part("shm")));
            Endpoint ep = await(a.connect(b.address()));
            ByteBuffer view = region.buffer().order(ByteOrder.nativeOrder());
            long aligned = region.address() + 64;
            assertEquals(0, aligned & 7, "the region's addresses are aligned");

            for (int round = 0; round < 50; round++) { // the first rounds before the grant, the rest under it
                ExecutionException e = assertThrows(ExecutionException.class,
                        () -> await(ep.atomicFetch64(AtomicOp.ADD, aligned, shifted, 1)));
                RemoteAccessException r = assertInstanceOf(RemoteAccessException.class, e.getCause());
                assertEquals(Reason.MISALIGNED, r.reason(), r.getMessage());
                assertTrue(r.getMessage().contains("base"), r.getMessage());
                ep.atomicPostImplicit64(AtomicOp.ADD, aligned, shifted, 1);
                ExecutionException flushed = assertThrows(ExecutionException.class, () -> await(ep.flush()));
                assertEquals(Reason.MISALIGNED,
                        assertInstanceOf(RemoteAccessException.class, flushed.getCause()).reason());
                await(ep.atomicFetch64(AtomicOp.ADD, aligned, key, 1)); // the endpoint still serves
            }
            assertEquals(50, view.getLong(64), "only the well-keyed ADDs landed");
            for (int i = 0; i < 64; i++) {
                assertEquals(0, view.get(i), "byte " + i + " before the word was written");
            }
            for (int i = 72; i < 128; i++) {
                assertEquals(0, view.get(i), "byte " + i + " after the word was written");
            }
            assertTrue(a.statistics().direct() > 0, "some rounds took the fast path: " + a.statistics());
        }
    }
}
