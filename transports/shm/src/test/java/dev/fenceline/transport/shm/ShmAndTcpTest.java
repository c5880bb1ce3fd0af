package dev.fenceline.transport.shm;

import static org.junit.jupiter.api.Assertions.assertEquals;

import com.typesafe.config.Config;
import com.typesafe.config.ConfigFactory;
import dev.fenceline.AtomicOp;
import dev.fenceline.Endpoint;
import dev.fenceline.Fenceline;
import dev.fenceline.MemoryRegion;
import dev.fenceline.RemoteKey;
import dev.fenceline.Worker;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.List;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * A worker with shm and tcp enabled: its regions' keys (memory it allocated and memory a user
 * registered) serve a tcp-only peer and a shm-only peer alike.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class ShmAndTcpTest {
    private static final String SECRET = "shm-and-tcp-test-secret-0123456789";

    private static Config config(String transports) {
        return ConfigFactory.parseString("fenceline.transports = " + transports + "\n"
                + "fenceline.transport.tcp { listen = [\"127.0.0.1:0\"], secret = \"" + SECRET + "\" }\n"
                + "fenceline.endpoint.keepalive { interval = 100ms, timeout = 1s }\n");
    }

    private static <T> T await(CompletionStage<T> s) throws Exception {
        return s.toCompletableFuture().get(20, TimeUnit.SECONDS);
    }

    /** Uses {@code key} from {@code origin} over whatever transport it shares with the owner. */
    private static void useKey(Worker origin, Worker owner, MemoryRegion region, byte[] packed, long tag)
            throws Exception {
        RemoteKey key = origin.unpackRemoteKey(packed);
        Endpoint ep = await(origin.connect(owner.address()));
        try {
            ByteBuffer src = ByteBuffer.allocateDirect(64).order(ByteOrder.nativeOrder());
            src.putLong(0, tag).putLong(56, ~tag);
            await(ep.put(src, key.baseAddress() + 64, key));
            long before = await(ep.atomicFetch64(AtomicOp.ADD, key.baseAddress(), key, 1));
            ByteBuffer back = ByteBuffer.allocateDirect(64).order(ByteOrder.nativeOrder());
            await(ep.get(back, key.baseAddress() + 64, key));
            assertEquals(tag, back.getLong(0), ep.lanes().toString());
            assertEquals(~tag, back.getLong(56));
            ByteBuffer memory = region.buffer().order(ByteOrder.nativeOrder());
            assertEquals(tag, memory.getLong(64), "written into the owner's memory");
            assertEquals(before + 1, memory.getLong(0));
        } finally {
            await(ep.close());
        }
    }

    @Test
    void aKeyOfAWorkerWithShmAndTcpServesATcpOnlyPeerAndAShmPeer() throws Exception {
        try (Fenceline both = Fenceline.create(config("[shm, tcp]"));
                Fenceline tcpOnly = Fenceline.create(config("[tcp]"));
                Fenceline shmOnly = Fenceline.create(config("[shm]"))) {
            Worker owner = await(both.newWorker("owner"));
            Worker overTcp = await(tcpOnly.newWorker("tcp-peer"));
            Worker overShm = await(shmOnly.newWorker("shm-peer"));
            // Both kinds of region: memory the transport provides and memory the user registers.
            MemoryRegion allocated = owner.allocate(4096);
            MemoryRegion registered = owner.register(ByteBuffer.allocateDirect(4096));
            for (MemoryRegion r : List.of(allocated, registered)) {
                byte[] packed = r.remoteKey().toBytes();
                useKey(overTcp, owner, r, packed, 0x7C9_0001L);
                useKey(overShm, owner, r, packed, 0x5E3_0002L);
                assertEquals(2, r.buffer().order(ByteOrder.nativeOrder()).getLong(0), "one add from each peer");
            }
        }
    }
}
