package dev.fenceline.transport.tcp;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.fenceline.AtomicOp;
import dev.fenceline.Endpoint;
import dev.fenceline.EndpointFailedException;
import dev.fenceline.Fenceline;
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
 * Over tcp the target applies every operation, so a refused peer ({@link Worker#refusePeer}) has
 * none applied: puts (the caller's own writes into the socket as much as the actor's), posted and
 * fetching atomics and gets end with {@link EndpointFailedException} and the region is untouched,
 * over one rail and two, while another peer's operations are applied.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class TcpRefusedPeerTest {
    private static <T> T await(CompletionStage<T> s) throws Exception {
        return s.toCompletableFuture().get(20, TimeUnit.SECONDS);
    }

    private static void refused(CompletionStage<?> s) {
        Throwable t = assertThrows(ExecutionException.class, () -> await(s)).getCause();
        assertInstanceOf(EndpointFailedException.class, t, String.valueOf(t));
        assertTrue(t.getMessage().contains("downed"), t.getMessage());
    }

    @Test
    void oneRail() throws Exception {
        nothingOfARefusedPeerIsApplied(TcpConfigs.loopback("127.0.0.1:0"));
    }

    @Test
    void twoRails() throws Exception {
        nothingOfARefusedPeerIsApplied(TcpConfigs.loopback("127.0.0.1:0", "127.0.0.2:0"));
    }

    private void nothingOfARefusedPeerIsApplied(com.typesafe.config.Config config) throws Exception {
        try (Fenceline f = Fenceline.create(config)) {
            Worker gone = await(f.newWorker("gone"));
            Worker other = await(f.newWorker("other"));
            Worker b = await(f.newWorker("b"));
            MemoryRegion r = b.allocate(128 << 10);
            ByteBuffer m = r.buffer().order(ByteOrder.nativeOrder());
            RemoteKey fromGone = gone.unpackRemoteKey(r.remoteKey().toBytes());
            Endpoint ep = await(gone.connect(b.address()));
            ByteBuffer one = ByteBuffer.allocate(8).order(ByteOrder.nativeOrder()).putLong(0, 1);
            await(ep.put(one.duplicate(), r.address(), fromGone));
            await(ep.flush());
            assertEquals(1, m.getLong(0), "before the refusal");

            b.refusePeer(gone.address().workerId(), "its member was downed");
            ByteBuffer seven = ByteBuffer.allocate(8).order(ByteOrder.nativeOrder()).putLong(0, 7);
            for (int i = 0; i < 50; i++) { // lone ones (written by the caller) and several outstanding
                refused(ep.put(seven.duplicate(), r.address() + 8, fromGone));
            }
            java.util.List<CompletionStage<Void>> burst = new java.util.ArrayList<>();
            for (int i = 0; i < 50; i++) {
                burst.add(ep.put(seven.duplicate(), r.address() + 16, fromGone));
            }
            burst.forEach(TcpRefusedPeerTest::refused);
            ByteBuffer bulk = ByteBuffer.allocate(64 << 10);
            java.util.Arrays.fill(bulk.array(), (byte) 7);
            refused(ep.put(bulk, r.address() + (64 << 10), fromGone));
            refused(ep.atomicPost64(AtomicOp.ADD, r.address() + 24, fromGone, 5));
            refused(ep.atomicFetch64(AtomicOp.ADD, r.address() + 24, fromGone, 5));
            refused(ep.compareAndSwap64(r.address() + 24, fromGone, 0, 9));
            refused(ep.get(ByteBuffer.allocate(8), r.address(), fromGone));
            Endpoint later = await(gone.connect(b.address()));
            refused(later.put(seven.duplicate(), r.address() + 32, fromGone));
            ep.putImplicit(seven.duplicate(), r.address() + 40, fromGone);
            refused(ep.flush());

            Endpoint served = await(other.connect(b.address()));
            RemoteKey fromOther = other.unpackRemoteKey(r.remoteKey().toBytes());
            await(served.put(seven.duplicate(), r.address() + 48, fromOther));
            await(served.atomicPost64(AtomicOp.ADD, r.address() + 56, fromOther, 2));
            await(served.flush());
            assertEquals(1, m.getLong(0));
            for (int at = 8; at < 48; at += 8) {
                assertEquals(0, m.getLong(at), "byte " + at + " written by the refused peer");
            }
            for (int at = 64; at < (128 << 10); at += 8) {
                assertEquals(0, m.getLong(at), "byte " + at + " written by the refused peer");
            }
            assertEquals(7, m.getLong(48), "another peer's put");
            assertEquals(2, m.getLong(56), "another peer's atomic");
        }
    }
}
