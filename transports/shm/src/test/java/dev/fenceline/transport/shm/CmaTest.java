package dev.fenceline.transport.shm;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;

import com.typesafe.config.ConfigFactory;
import dev.fenceline.Endpoint;
import dev.fenceline.Fenceline;
import dev.fenceline.LaneType;
import dev.fenceline.MemoryRegion;
import dev.fenceline.RemoteAccessException;
import dev.fenceline.RemoteAccessException.Reason;
import dev.fenceline.RemoteKey;
import dev.fenceline.Worker;
import java.nio.ByteBuffer;
import java.util.Random;
import java.util.Set;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Cross-memory attach: the libc binding passes its sixth argument intact (jnr-ffi#181), and the
 * bulk lane moves registered memory in one copy while refusing closed and forged keys without
 * writing anything.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class CmaTest {
    private static <T> T await(CompletionStage<T> s) throws Exception {
        return s.toCompletableFuture().get(20, TimeUnit.SECONDS);
    }

    @Test
    void theBindingWorksHere() {
        assertNull(Cma.unavailable(), "process_vm_* must work on this machine (CI runs as root)");
        // A corrupted sixth argument (flags) makes the kernel answer EINVAL; an intact one copies.
        Cma cma = new Cma(4096);
        ByteBuffer target = ByteBuffer.allocateDirect(64);
        long address = com.kenai.jffi.MemoryIO.getInstance().getDirectBufferAddress(target);
        assertNull(cma.write(ProcessHandle.current().pid(), address + 8, ByteBuffer.wrap(new byte[] {1, 2, 3})));
        assertEquals(1, target.get(8));
        assertEquals(3, target.get(10));
        ByteBuffer back = ByteBuffer.allocate(3);
        assertNull(cma.read(ProcessHandle.current().pid(), address + 8, back));
        assertArrayEquals(new byte[] {1, 2, 3}, back.array());
    }

    @Test
    void registeredMemoryMovesOverTheBulkLaneAndBadKeysWriteNothing() throws Exception {
        try (Fenceline f = Fenceline.create(ConfigFactory.parseString("fenceline.transports = [shm]"))) {
            Worker a = await(f.newWorker("a"));
            Worker b = await(f.newWorker("b"));
            ByteBuffer plain = ByteBuffer.allocateDirect(4 << 20);
            MemoryRegion region = b.register(plain);
            RemoteKey key = a.unpackRemoteKey(region.remoteKey().toBytes());
            Endpoint ep = await(a.connect(b.address()));
            assertEquals(2, ep.lanes().size(), ep.lanes().toString());
            assertEquals(Set.of(LaneType.RMA_BW), ep.lanes().get(1).types());
            byte[] data = new byte[3 << 20];
            new Random(11).nextBytes(data);
            await(ep.put(ByteBuffer.wrap(data), region.address() + 100, key));
            byte[] there = new byte[data.length];
            plain.get(100, there);
            assertArrayEquals(data, there);
            ByteBuffer back = ByteBuffer.allocateDirect(data.length);
            await(ep.get(back, region.address() + 100, key));
            byte[] got = new byte[data.length];
            back.get(0, got);
            assertArrayEquals(data, got);

            RemoteKey forged = new RemoteKey(key.ownerId(), key.keyId() ^ 1, key.baseAddress(), key.length(),
                    java.util.Map.of("shm", key.part("shm")));
            assertEquals(Reason.UNKNOWN_KEY, refusal(ep.put(ByteBuffer.allocate(64 << 10), region.address(), forged)));
            // A key that claims more memory than was registered cannot reach past the registration.
            RemoteKey widened = new RemoteKey(key.ownerId(), key.keyId(), key.baseAddress() - 65536,
                    key.length() + 131072, java.util.Map.of("shm", key.part("shm")));
            assertEquals(Reason.OUT_OF_BOUNDS, refusal(ep.put(ByteBuffer.allocate(64 << 10),
                    region.address() - 65536, widened)));
            region.close();
            assertEquals(Reason.REGION_CLOSED, refusal(ep.put(ByteBuffer.allocate(64 << 10), region.address(), key)));
            assertEquals(data[0], plain.get(100), "nothing was written through a bad key");
        }
    }

    private static Reason refusal(CompletionStage<?> op) {
        ExecutionException e = assertThrows(ExecutionException.class, () -> await(op));
        return assertInstanceOf(RemoteAccessException.class, e.getCause()).reason();
    }
}
