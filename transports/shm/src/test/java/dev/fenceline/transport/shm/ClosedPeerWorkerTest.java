package dev.fenceline.transport.shm;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.typesafe.config.ConfigFactory;
import dev.fenceline.Endpoint;
import dev.fenceline.EndpointFailedException;
import dev.fenceline.Fenceline;
import dev.fenceline.LaneInfo;
import dev.fenceline.MemoryRegion;
import dev.fenceline.RemoteKey;
import dev.fenceline.Worker;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * A peer worker that closes while its process runs on: every lane to it (the ring lane and the cma
 * lane) fails within a liveness interval, naming the close, where before the ring lane waited for
 * keepalive to call its peer stopped and the cma lane stayed up; and its control segment is let go,
 * so a process whose peer workers come and go does not run into max-peers.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class ClosedPeerWorkerTest {
    private static <T> T await(CompletionStage<T> s) throws Exception {
        return s.toCompletableFuture().get(10, TimeUnit.SECONDS);
    }

    private static ByteBuffer word(long v) {
        return ByteBuffer.allocateDirect(8).order(ByteOrder.nativeOrder()).putLong(0, v);
    }

    @Test
    void lanesToAClosedWorkerFailNamingTheCloseAndItsSegmentIsLetGo() throws Exception {
        try (Fenceline f = Fenceline.create(ConfigFactory.parseString("""
                fenceline.transports = [shm]
                fenceline.transport.shm.max-peers = 2
                fenceline.endpoint.keepalive { interval = 200ms, timeout = 50s }
                """))) {
            Worker a = await(f.newWorker("a"));
            for (int round = 1; round <= 5; round++) {
                Worker b = await(f.newWorker("b" + round));
                ByteBuffer memory = ByteBuffer.allocateDirect(64).order(ByteOrder.nativeOrder());
                MemoryRegion region = b.register(memory);
                RemoteKey key = a.unpackRemoteKey(region.remoteKey().toBytes());
                // Past max-peers = 2 from the third round on, unless the closed peers were let go.
                Endpoint ep = await(a.connect(b.address()));
                assertEquals(Cma.unavailable() == null ? 2 : 1, ep.lanes().size(),
                        "a ring lane, and a cma lane where cross-memory attach works: " + ep.lanes());
                await(ep.put(word(round), key.baseAddress(), key));
                assertEquals(round, memory.getLong(0), "round " + round);

                await(b.close());
                long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
                while (ep.lanes().stream().anyMatch(LaneInfo::live) && System.nanoTime() < deadline) {
                    Thread.sleep(10); // the lanes fail on the transport's liveness tick (100 ms), not by keepalive (50 s)
                }
                assertTrue(ep.lanes().stream().noneMatch(LaneInfo::live), "round " + round + ": lanes to a closed worker: "
                        + ep.lanes());
                ExecutionException e = assertThrows(ExecutionException.class,
                        () -> await(ep.put(word(-1), key.baseAddress(), key)));
                assertInstanceOf(EndpointFailedException.class, e.getCause(), "round " + round);
                assertTrue(String.valueOf(e.getCause().getMessage()).contains("closed"),
                        "round " + round + ": " + e.getCause().getMessage());
                assertEquals(round, memory.getLong(0), "round " + round + ": nothing written after the close");
            }
        }
    }

    @Test
    void aConnectToAWorkerThatClosedIsRefusedAtOnceNamingTheClose() throws Exception {
        try (Fenceline f = Fenceline.create(ConfigFactory.parseString("""
                fenceline.transports = [shm]
                # No tick during the test: only the segment's mark tells that its worker closed.
                fenceline.transport.shm { liveness-interval = 60s, connect-timeout = 5s }
                """))) {
            Worker a = await(f.newWorker("a"));
            Worker b = await(f.newWorker("b"));
            await(a.connect(b.address())); // a keeps b's segment mapped from now on
            await(b.close());
            long start = System.nanoTime();
            ExecutionException e = assertThrows(ExecutionException.class, () -> await(a.connect(b.address())));
            long ms = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start);
            assertInstanceOf(EndpointFailedException.class, e.getCause());
            assertTrue(String.valueOf(e.getCause().getMessage()).contains("closed"), e.getCause().getMessage());
            assertTrue(ms < 4_000, "refused in " + ms + " ms, not at the connect timeout");
        }
    }
}
