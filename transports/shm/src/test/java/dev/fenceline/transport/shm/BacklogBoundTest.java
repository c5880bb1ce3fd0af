package dev.fenceline.transport.shm;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.typesafe.config.ConfigFactory;
import dev.fenceline.AtomicOp;
import dev.fenceline.Endpoint;
import dev.fenceline.Fenceline;
import dev.fenceline.LaneInfo;
import dev.fenceline.MemoryRegion;
import dev.fenceline.RemoteKey;
import dev.fenceline.Worker;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.agrona.concurrent.ringbuffer.RecordDescriptor;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Answers owed to a peer process whose inbox stays full are held, up to max-backlog: past it the
 * target drops that peer's connections with every answer owed and tells each with a RESET once its
 * inbox has room, instead of holding whatever a peer that never reads asks for; an origin's lane
 * that reads a RESET fails.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class BacklogBoundTest {
    /**
     * An origin asks for 300 gets of 8,168 bytes (2.4 MB of answers; 8 of them fill its inbox to the
     * last byte) and reads nothing meanwhile:
     * with max-backlog = 1 MiB the target holds what fits, then drops the connection with the
     * answers it held; the origin reads the answers its inbox took and then the RESET naming the
     * setting, and the target goes on serving its other peers.
     */
    @Test
    void answersOwedPastMaxBacklogDropTheConnectionWithAReset() throws Exception {
        try (Fenceline f = Fenceline.create(ConfigFactory.parseString("""
                fenceline.transports = [shm]
                fenceline.transport.shm.max-backlog = 1MiB
                """));
                FakeShmPeer fake = FakeShmPeer.create(64 << 10)) {
            Worker a = FakeShmPeer.worker(f, "a");
            Worker b = FakeShmPeer.worker(f, "b");
            int n = (64 << 10) / 8 - 16 - 8; // a record of 8,192 bytes with its header: 8 fill the ring
            MemoryRegion region = b.register(ByteBuffer.allocateDirect(n));
            RemoteKey key = region.remoteKey();
            long conn = fake.connect(b);
            // The CONNECTED took the ring's first line (64 bytes): 7 answers of 8,192 bytes and one of
            // 8,128 bring the next one to the ring's start, so that 8 more fill it to the last byte.
            int connected = ShmWire.claimLength(ShmWire.CONNECTED, 12) + RecordDescriptor.HEADER_LENGTH;
            for (int i = 1; i <= 8; i++) {
                long token = 1000 + i;
                FakeShmPeer.write(FakeShmPeer.inboxOf(b), ShmWire.GET,
                        FakeShmPeer.get(conn, token, key.keyId(), key.baseAddress(), i < 8 ? n : n - connected));
                fake.await(m -> m.type() == ShmWire.GET_DATA && m.getLong(ShmWire.TOKEN) == token, "GET_DATA " + i);
            }
            int gets = 300;
            for (int token = 1; token <= gets; token++) {
                FakeShmPeer.write(FakeShmPeer.inboxOf(b), ShmWire.GET,
                        FakeShmPeer.get(conn, token, key.keyId(), key.baseAddress(), n));
            }
            org.agrona.concurrent.ringbuffer.ManyToOneRingBuffer inbox = FakeShmPeer.inboxOf(b);
            awaitRead(inbox); // b took every get before this reads
            // A CONNECT while the RESET waits for room is dropped: CONNECTs from a peer that reads
            // nothing would otherwise pile up RESETs and CONNECTEDs past any bound.
            fake.inbox.gates.open(1, 0x5eed_0001L);
            fake.sendConnect(b, 1, 0x5eed_0001L);
            awaitRead(inbox);
            FakeShmPeer.Message reset = fake.await(m -> m.type() == ShmWire.RESET, "a RESET");
            assertEquals(conn, reset.getLong(0));
            assertEquals(0, (reset.bytes().length + RecordDescriptor.HEADER_LENGTH) % ShmWire.LINE,
                    "a RESET takes whole lines: " + reset.bytes().length + " bytes");
            String why = reset.text(10);
            assertTrue(why.contains("max-backlog = 1048576"), why);
            int answered = 0;
            while (true) { // what came before the RESET: the answers that fitted, in order
                FakeShmPeer.Message m = fake.pollRead();
                if (m == null) {
                    break;
                }
                assertEquals(ShmWire.GET_DATA, m.type(), ShmWire.name(m.type()));
                assertEquals(++answered, m.getLong(ShmWire.TOKEN));
            }
            // Those already in the inbox (8 fill it); those held were dropped with the connection.
            assertEquals(8, answered, "gets answered before the RESET");
            assertTrue(!fake.connected(0x5eed_0001L, 0), "a CONNECT was answered while a RESET was owed");
            fake.inbox.gates.open(2, 0x5eed_0002L); // the RESET came: a new connection is answered
            fake.sendConnect(b, 2, 0x5eed_0002L);
            assertTrue(fake.connected(0x5eed_0002L, 10_000), "a CONNECT after the RESET was not answered");

            FakeShmPeer.assertServes(a, b);
        }
    }

    /**
     * A put and an atomic the target took (through the origin's gate) and then dropped the answers
     * of with a RESET are not waited for on the reset lane, though the endpoint lives on (its cma
     * lane): both end (they waited for good without the RESET's handling).
     */
    @Test
    void operationsTheTargetTookAndResetAreNotWaitedFor() throws Exception {
        try (Fenceline f = Fenceline.create(ConfigFactory.parseString("fenceline.transports = [shm]"));
                FakeShmPeer fake = FakeShmPeer.create(64 << 10)) {
            Worker a = FakeShmPeer.worker(f, "a");
            FakeShmPeer.Accepted accepted = fake.accept(a, 1 << 10);
            long conn = accepted.conn();
            Endpoint ep = accepted.endpoint();
            assertEquals(2, ep.lanes().size(), "a ring lane and a cma lane: " + ep.lanes());

            RemoteKey key = new RemoteKey(fake.address().workerId(), 0x5eed, 1 << 20, 64, java.util.Map.of());
            CompletableFuture<Void> put = ep.put(ByteBuffer.allocateDirect(8), key.baseAddress(), key)
                    .toCompletableFuture();
            CompletableFuture<Long> add = ep.atomicFetch64(AtomicOp.ADD, key.baseAddress() + 8, key, 1)
                    .toCompletableFuture();
            Inbox atA = Inbox.open(java.nio.file.Path.of("/dev/shm", HostileInboxTest.controlOf(a)), true);
            int gate = gateOf(atA, conn);
            for (int type : new int[] {ShmWire.PUT, ShmWire.ATOMIC}) { // taken, as a target takes a record
                fake.await(m -> m.type() == type, ShmWire.name(type));
                assertTrue(atA.gates.enter(gate, conn), "the gate of a's connection lets the fake in");
                atA.gates.leave(gate);
            }
            byte[] why = "the test drops its answers".getBytes(StandardCharsets.UTF_8);
            ByteBuffer reset = ByteBuffer.allocate(10 + why.length).order(ByteOrder.nativeOrder());
            reset.putLong(0, conn).putShort(8, (short) why.length).put(10, why);
            FakeShmPeer.write(FakeShmPeer.inboxOf(a), ShmWire.RESET, reset.array());
            // The atomic cannot be sent again (no other lane would recognize a copy): its outcome is
            // unknown. The put goes again over the cma lane, where this fake's key has no part.
            java.util.concurrent.ExecutionException e = org.junit.jupiter.api.Assertions.assertThrows(
                    java.util.concurrent.ExecutionException.class, () -> add.get(20, TimeUnit.SECONDS));
            org.junit.jupiter.api.Assertions.assertInstanceOf(dev.fenceline.OutcomeUnknownException.class,
                    e.getCause(), String.valueOf(e.getCause()));
            e = org.junit.jupiter.api.Assertions.assertThrows(java.util.concurrent.ExecutionException.class,
                    () -> put.get(20, TimeUnit.SECONDS));
            org.junit.jupiter.api.Assertions.assertInstanceOf(dev.fenceline.FencelineException.class,
                    e.getCause(), String.valueOf(e.getCause()));
        }
    }

    /** Waits until a worker has read its inbox to where its peers have written. */
    private static void awaitRead(org.agrona.concurrent.ringbuffer.ManyToOneRingBuffer inbox) throws Exception {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        long written = inbox.producerPosition();
        while (inbox.consumerPosition() < written) {
            assertTrue(System.nanoTime() < deadline, "the inbox was not read in 10 s");
            Thread.sleep(1);
        }
    }

    /** @return the gate slot of {@code conn} in {@code origin}'s gate table */
    private static int gateOf(Inbox origin, long conn) {
        for (int slot = 0; slot < origin.gates.slots(); slot++) {
            if (origin.gates.openFor(slot, conn)) {
                return slot;
            }
        }
        throw new AssertionError("no gate is open for connection " + Long.toHexString(conn));
    }

    /** An origin's lane whose target sends a RESET for its connection fails. */
    @Test
    void aLaneWhoseTargetResetsItsConnectionFails() throws Exception {
        try (Fenceline f = Fenceline.create(ConfigFactory.parseString("""
                fenceline.transports = [shm]
                fenceline.transport.shm.cma = off
                """));
                FakeShmPeer fake = FakeShmPeer.create(64 << 10)) {
            Worker a = FakeShmPeer.worker(f, "a");
            FakeShmPeer.Accepted accepted = fake.accept(a, 1 << 10);
            long conn = accepted.conn();
            Endpoint ep = accepted.endpoint();
            List<LaneInfo> before = ep.lanes();
            assertTrue(before.size() == 1 && before.get(0).live(), "one live lane: " + before);

            byte[] why = "the test's reason".getBytes(StandardCharsets.UTF_8);
            ByteBuffer reset = ByteBuffer.allocate(10 + why.length).order(ByteOrder.nativeOrder());
            reset.putLong(0, conn).putShort(8, (short) why.length).put(10, why);
            FakeShmPeer.write(FakeShmPeer.inboxOf(a), ShmWire.RESET, reset.array());
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
            while (ep.lanes().stream().anyMatch(l -> l.live() && l.connectionId() == before.get(0).connectionId())) {
                assertTrue(System.nanoTime() < deadline, "the lane is live 10 s after its RESET: " + ep.lanes());
                Thread.sleep(10);
            }
        }
    }
}
