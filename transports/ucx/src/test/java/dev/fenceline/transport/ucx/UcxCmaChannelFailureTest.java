package dev.fenceline.transport.ucx;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.typesafe.config.ConfigFactory;
import dev.fenceline.Endpoint;
import dev.fenceline.EndpointFailedException;
import dev.fenceline.Fenceline;
import dev.fenceline.LaneType;
import dev.fenceline.MemoryRegion;
import dev.fenceline.RemoteKey;
import dev.fenceline.Worker;
import java.nio.ByteBuffer;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * A cma copy is a transfer UCT carries out over many progress calls, one segment each. When its
 * channel fails while one is under way, the copy may still land: UCT completes it, and the
 * endpoint's operation is answered by that completion, not restarted elsewhere as if it had
 * stopped (a restarted copy would race the first one, and an operation told "not applied" could
 * turn up in the target's memory). The failed channel's UCT endpoint stays until then: destroyed
 * at once, UCX would run the rest of the transfer on freed memory.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class UcxCmaChannelFailureTest {
    /**
     * Large, one transfer (fragments as large), and moved 4 KiB per progress call: the copy takes
     * many passes of the agent.
     */
    private static final int SIZE = 32 << 20;

    /** posix and cma, one fragment per put, cma moving 4 KiB per progress call. */
    private static final String CONFIG = """
            fenceline.transports = [ucx]
            fenceline.transport.ucx.tls = [posix, cma]
            fenceline.transport.ucx.uct.cma { SCOPY_SEG_SIZE = 4K }
            fenceline.transport.ucx.max-fragment = 32MiB
            fenceline.protocol.fragment-size = 32MiB
            """;

    @BeforeAll
    static void ucx() {
        UcxAssumptions.ucxAvailable();
    }

    @Test
    void aCopyUnderWayWhenItsChannelFailsIsAnsweredByItsCompletion() throws Exception {
        try (Fenceline f = Fenceline.create(ConfigFactory.parseString(CONFIG))) {
            Worker a = await(f.newWorker("a"));
            Worker b = await(f.newWorker("b"));
            MemoryRegion registered = b.register(ByteBuffer.allocateDirect(SIZE));
            RemoteKey rk = a.unpackRemoteKey(registered.remoteKey().toBytes());
            Endpoint ep = await(a.connect(b.address()));
            assertEquals(java.util.Set.of(LaneType.RMA_BW), ep.lanes().get(1).types(), ep.lanes()::toString);
            UcxLane cma = UcxLane.byId(ep.lanes().get(1).connectionId());
            assertNotNull(cma, "the cma lane is live");
            ByteBuffer bulk = filled(SIZE, (byte) 0x5a);
            ByteBuffer memory = registered.buffer();

            CompletableFuture<Void> put = ep.put(bulk, registered.address(), rk).toCompletableFuture();
            awaitBegun(memory, put);
            cma.breakChannel(new EndpointFailedException("test: UCT reported the peer failed"));
            assertTrue(memory.get(SIZE - 1) != 0x5a, "the copy ended before its channel was failed: the test"
                    + " needs a larger transfer");

            await(put);
            for (int i = 0; i < SIZE; i += 4096) {
                assertEquals(0x5a, memory.get(i), "byte " + i);
            }
            assertEquals(0x5a, memory.get(SIZE - 1));
            assertEquals(0, ep.statistics().restarts(), "answered by the copy's completion, not restarted: "
                    + ep.statistics());
            assertEquals(0, ep.statistics().failed(), ep.statistics().toString());

            // The endpoint carries on, and nothing of the first copy lands after a later put.
            ByteBuffer other = filled(64 << 10, (byte) 0xa5);
            await(ep.put(other, registered.address(), rk));
            await(ep.flush());
            for (int i = 0; i < other.capacity(); i++) {
                assertEquals((byte) 0xa5, memory.get(i), "byte " + i);
            }
            await(ep.close());
        }
    }

    /**
     * A worker closed while a copy of an endpoint it gave up is under way: the agent lets UCT finish
     * it before the ifaces close (destroyed under a queued transfer, UCX aborts the process).
     */
    @Test
    void aWorkerClosedWhileACopyIsUnderWayLetsItFinish() throws Exception {
        CompletableFuture<Void> put;
        ByteBuffer memory;
        try (Fenceline f = Fenceline.create(ConfigFactory.parseString(CONFIG))) {
            Worker a = await(f.newWorker("a"));
            Worker b = await(f.newWorker("b"));
            MemoryRegion registered = b.register(ByteBuffer.allocateDirect(SIZE));
            RemoteKey rk = a.unpackRemoteKey(registered.remoteKey().toBytes());
            Endpoint ep = await(a.connect(b.address()));
            ByteBuffer bulk = filled(SIZE, (byte) 0x5a);
            memory = registered.buffer();
            put = ep.put(bulk, registered.address(), rk).toCompletableFuture();
            awaitBegun(memory, put);
            ep.abort("test: given up"); // the close does not wait for what it had in flight
            await(a.close());
        }
        try {
            await(put);
        } catch (java.util.concurrent.ExecutionException e) {
            assertFalse(e.getCause() instanceof EndpointFailedException, "the copy had begun: it may not be"
                    + " reported as not applied: " + e.getCause());
        }
    }

    private static ByteBuffer filled(int size, byte value) {
        ByteBuffer b = ByteBuffer.allocateDirect(size);
        for (int i = 0; i < size; i++) {
            b.put(i, value);
        }
        return b;
    }

    /** Until the copy's first segment landed: it is under way. */
    private static void awaitBegun(ByteBuffer memory, CompletableFuture<Void> put) {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
        while (memory.get(0) != 0x5a) {
            assertTrue(System.nanoTime() < deadline, "the copy did not begin: " + put);
            Thread.onSpinWait();
        }
    }

    private static <T> T await(java.util.concurrent.CompletionStage<T> s) throws Exception {
        return s.toCompletableFuture().get(60, TimeUnit.SECONDS);
    }
}
