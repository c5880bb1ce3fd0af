package dev.fenceline.transport.ucx;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.typesafe.config.ConfigFactory;
import dev.fenceline.Endpoint;
import dev.fenceline.Fenceline;
import dev.fenceline.MemoryRegion;
import dev.fenceline.RemoteKey;
import dev.fenceline.Worker;
import java.nio.ByteBuffer;
import java.util.List;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Where UCT's completion of a hardware operation is not in place (RDMA: the adapter took it, the
 * target's memory may not have it yet), a put is answered only after a UCT flush after it, and a
 * weak fence goes through UCT's fence; on shared memory the CPU did the copy and neither is asked.
 * No RDMA device is here: {@code uct-flush = always} takes cma through the same path.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class UcxRemoteFlushTest {
    @BeforeAll
    static void ucx() {
        UcxAssumptions.ucxAvailable();
    }

    @Test
    void inPlaceOnlyOnSharedMemoryAndSelf() {
        assertTrue(UctIface.completesInPlace(new UctResource("posix", "posix", "posix", "memory", "shm")));
        assertTrue(UctIface.completesInPlace(new UctResource("cma", "cma", "cma", "memory", "shm")));
        assertTrue(UctIface.completesInPlace(new UctResource("self", "self", "self", "memory", "self")));
        assertFalse(UctIface.completesInPlace(new UctResource("ib", "mlx5_0", "rc_mlx5", "mlx5_0:1", "net")));
        assertFalse(UctIface.completesInPlace(new UctResource("tcp", "tcp", "tcp", "lo", "net")));
    }

    @Test
    void sharedMemoryFlushesAndFencesWithoutUct() throws Exception {
        UctEndpoint ep = fencedPuts("");
        assertEquals(0, ep.flushes, "cma completes in place");
        assertEquals(0, ep.fences, "cma completes in place");
    }

    @Test
    void alwaysTakesSharedMemoryThroughUctFlushAndFence() throws Exception {
        UctEndpoint ep = fencedPuts("uct-flush = always");
        assertEquals(1, ep.fences, "the weak fence between the puts");
        assertEquals(2, ep.flushes, "each put answered after a UCT flush; the endpoint's flush then has none to wait for");
    }

    /**
     * Two lanes, posix for messages and small operations, cma for bulk transfers: a put, a fence, a
     * put and a flush, each put large enough for cma's zero-copy (a UCT call of the progress agent;
     * small puts to shared memory are stores of the calling thread, without UCT), both visible at
     * the target after the flush. (UCT's tcp reaches no memory without its target's software, so
     * every operation there is a request the target answers, and its flush is the target's answer.)
     *
     * @return the bulk lane's UCT endpoint, once the flush completed
     */
    private static UctEndpoint fencedPuts(String settings) throws Exception {
        try (Fenceline f = Fenceline.create(ConfigFactory.parseString(settings + "\ntls = [posix, cma]")
                .atPath(UcxSettings.SECTION).withFallback(ConfigFactory.parseString("fenceline.transports = [ucx]")))) {
            Worker a = await(f.newWorker("a"));
            Worker b = await(f.newWorker("b"));
            int size = 256 << 10;
            MemoryRegion target = b.register(ByteBuffer.allocateDirect(2 * size));
            RemoteKey key = a.unpackRemoteKey(target.remoteKey().toBytes());
            ByteBuffer source = ByteBuffer.allocateDirect(2 * size);
            for (int i = 0; i < 2 * size; i++) {
                source.put(i, (byte) (i * 7 + 1));
            }
            Endpoint ep = await(a.connect(b.address()));
            assertEquals(2, ep.lanes().size(), ep.lanes()::toString);
            UcxLane bulk = UcxLane.byId(ep.lanes().get(1).connectionId());
            assertNotNull(bulk, "the endpoint's bulk lane");
            assertEquals("cma", bulk.channel.iface.resource().transport());
            await(ep.put(source.duplicate().position(0).limit(size), target.address(), key));
            ep.fence();
            await(ep.put(source.duplicate().position(size).limit(2 * size), target.address() + size, key));
            await(ep.flush());
            for (int i : List.of(0, size - 1, size, 2 * size - 1)) {
                assertEquals((byte) (i * 7 + 1), target.buffer().get(i), "target byte " + i);
            }
            return bulk.channel.ep;
        }
    }

    private static <T> T await(CompletionStage<T> s) throws Exception {
        return s.toCompletableFuture().get(30, TimeUnit.SECONDS);
    }
}
