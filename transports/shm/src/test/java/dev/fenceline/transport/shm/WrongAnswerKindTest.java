package dev.fenceline.transport.shm;

import static org.junit.jupiter.api.Assertions.assertTrue;

import com.typesafe.config.ConfigFactory;
import dev.fenceline.Endpoint;
import dev.fenceline.Fenceline;
import dev.fenceline.LaneInfo;
import dev.fenceline.RemoteKey;
import dev.fenceline.Worker;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import org.junit.jupiter.api.Timeout;

/**
 * A target's answer must be of the kind its message asks for: a get's is its data (or a NACK), and
 * only a get's answer carries data. An ACK or FLUSHED for a get would report it done with its
 * buffer never written; the lane fails instead, and the get is not reported done.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class WrongAnswerKindTest {
    @ParameterizedTest(name = "a get answered with {0}")
    @ValueSource(ints = {ShmWire.ACK, ShmWire.FLUSHED})
    void aGetAnsweredWithoutItsDataFailsTheLane(int answer) throws Exception {
        try (Fenceline f = Fenceline.create(ConfigFactory.parseString("""
                fenceline.transports = [shm]
                fenceline.transport.shm.cma = off
                """));
                FakeShmPeer fake = FakeShmPeer.create(64 << 10)) {
            Worker a = f.newWorker("a").toCompletableFuture().get(10, TimeUnit.SECONDS);
            FakeShmPeer.Accepted accepted = fake.accept(a, 1 << 10);
            long conn = accepted.conn();
            Endpoint ep = accepted.endpoint();
            List<LaneInfo> before = ep.lanes();

            RemoteKey key = new RemoteKey(fake.address().workerId(), 0x5eed, 1 << 20, 64, Map.of());
            ByteBuffer into = ByteBuffer.allocateDirect(8);
            CompletableFuture<Void> get = ep.get(into, key.baseAddress(), key).toCompletableFuture();
            FakeShmPeer.Message request = fake.await(m -> m.type() == ShmWire.GET, "a's GET");
            ByteBuffer reply = ByteBuffer.allocate(24).order(ByteOrder.nativeOrder());
            reply.putLong(0, conn).putLong(8, request.getLong(ShmWire.TOKEN)).putLong(16, 42);
            FakeShmPeer.write(FakeShmPeer.inboxOf(a), answer, answer == ShmWire.ACK ? reply.array()
                    : java.util.Arrays.copyOf(reply.array(), 16));

            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
            while (ep.lanes().stream().anyMatch(l -> l.live() && l.connectionId() == before.get(0).connectionId())) {
                assertTrue(System.nanoTime() < deadline, "the lane is live 10 s after a " + ShmWire.name(answer)
                        + " answered its get: " + ep.lanes());
                Thread.sleep(10);
            }
            assertTrue(!get.isDone() || get.isCompletedExceptionally(), "the get was reported done: " + get);
        }
    }

    /**
     * A peer that took two puts and answered the first with a get's data is broken: none of its
     * answers can be waited for. The lane fails, and the puts it took end (each may have been
     * applied) instead of waiting for answers that will not come.
     */
    @Test
    void messagesTakenByAPeerThatAnsweredWronglyAreNotAwaitedForever() throws Exception {
        try (Fenceline f = Fenceline.create(ConfigFactory.parseString("""
                fenceline.transports = [shm]
                fenceline.transport.shm.cma = off
                """));
                FakeShmPeer fake = FakeShmPeer.create(64 << 10)) {
            Worker a = f.newWorker("a").toCompletableFuture().get(10, TimeUnit.SECONDS);
            CompletableFuture<Endpoint> connecting = a.connect(fake.address()).toCompletableFuture();
            FakeShmPeer.Message connect = fake.await(m -> m.type() == ShmWire.CONNECT, "a's CONNECT");
            long conn = connect.getLong(0);
            int gate = connect.getInt(40);
            ByteBuffer connected = ByteBuffer.allocate(12).order(ByteOrder.nativeOrder());
            connected.putLong(0, conn).putInt(8, 1 << 10);
            FakeShmPeer.write(FakeShmPeer.inboxOf(a), ShmWire.CONNECTED, connected.array());
            Endpoint ep = connecting.get(10, TimeUnit.SECONDS);

            RemoteKey key = new RemoteKey(fake.address().workerId(), 0x5eed, 1 << 20, 64, Map.of());
            CompletableFuture<Void> first = ep.put(ByteBuffer.allocateDirect(8), key.baseAddress(), key)
                    .toCompletableFuture();
            CompletableFuture<Void> second = ep.put(ByteBuffer.allocateDirect(8), key.baseAddress() + 8, key)
                    .toCompletableFuture();
            FakeShmPeer.Message p1 = fake.await(m -> m.type() == ShmWire.PUT, "a's first PUT");
            fake.await(m -> m.type() == ShmWire.PUT && m.getLong(ShmWire.TOKEN) != p1.getLong(ShmWire.TOKEN),
                    "a's second PUT");
            Gates gates = Inbox.open(java.nio.file.Path.of("/dev/shm", HostileInboxTest.controlOf(a)), true).gates;
            for (int i = 0; i < 2; i++) { // as a target that took both: through the origin's gate
                assertTrue(gates.enter(gate, conn), "the gate is open");
                gates.leave(gate);
            }
            ByteBuffer data = ByteBuffer.allocate(24).order(ByteOrder.nativeOrder());
            data.putLong(0, conn).putLong(8, p1.getLong(ShmWire.TOKEN)).putLong(16, 7);
            FakeShmPeer.write(FakeShmPeer.inboxOf(a), ShmWire.GET_DATA, data.array());

            for (CompletableFuture<Void> put : List.of(first, second)) {
                java.util.concurrent.ExecutionException e = org.junit.jupiter.api.Assertions.assertThrows(
                        java.util.concurrent.ExecutionException.class, () -> put.get(10, TimeUnit.SECONDS),
                        "a put the broken peer took ends, not waiting for its answer");
                assertTrue(e.getCause() instanceof dev.fenceline.OutcomeUnknownException, "it may have been applied: "
                        + e.getCause());
            }
        }
    }
}
