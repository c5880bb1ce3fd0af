package dev.fenceline.transport.shm;

import static org.junit.jupiter.api.Assertions.assertEquals;

import com.typesafe.config.ConfigFactory;
import dev.fenceline.AtomicOp;
import dev.fenceline.Endpoint;
import dev.fenceline.Fenceline;
import dev.fenceline.MemoryRegion;
import dev.fenceline.RemoteKey;
import dev.fenceline.Worker;
import java.nio.ByteBuffer;
import java.nio.file.Path;
import java.util.SplittableRandom;
import java.util.concurrent.TimeUnit;
import org.agrona.concurrent.ringbuffer.ManyToOneRingBuffer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Every byte a peer writes into a worker's inbox is hostile: a CONNECT whose name length runs past
 * its record, that names a gate its sender does not have, or a segment that is not one; records of
 * every type, cut short or filled with garbage. The worker drops each (with a warning), never
 * crashes its polling thread, and keeps serving its endpoints.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class HostileInboxTest {
    /** @return the name of a worker's control segment (its random part is only in /dev/shm) */
    static String controlOf(Worker w) throws Exception {
        String prefix = Segments.processPrefix() + w.address().workerId().toString().substring(0, 8) + "-";
        try (java.util.stream.Stream<Path> files = java.nio.file.Files.list(Path.of("/dev/shm"))) {
            return files.map(p -> p.getFileName().toString()).filter(n -> n.startsWith(prefix) && n.endsWith("-ctl"))
                    .findFirst().orElseThrow(() -> new AssertionError("no control segment " + prefix + "*-ctl"));
        }
    }

    private static ManyToOneRingBuffer inboxOf(Worker w) throws Exception {
        return Inbox.open(Path.of("/dev/shm", controlOf(w)), true).ring;
    }

    private static void write(ManyToOneRingBuffer ring, int type, byte[] body) {
        int at = ring.tryClaim(type, Math.max(1, body.length));
        if (at >= 0) {
            ring.buffer().putBytes(at, body);
            ring.commit(at);
        }
    }

    private static byte[] connect(int gate, int nameLength, String name) {
        byte[] n = name.getBytes(java.nio.charset.StandardCharsets.UTF_8);
        ByteBuffer b = ByteBuffer.allocate(48 + n.length).order(java.nio.ByteOrder.nativeOrder());
        b.putLong(0, 99).putInt(40, gate).putInt(44, nameLength).put(48, n);
        return b.array();
    }

    /**
     * A record length outside the ring's framing (a process that maps the inbox wrote it there rather
     * than commit its claim): nothing past it can be found, so the worker stops its shm transport,
     * marks its segment broken and stops its heartbeat, and a peer's operation waiting for it fails
     * within a liveness tick (not keepalive's timeout) instead of waiting for ever while the
     * heartbeat says the worker lives.
     */
    @Test
    void aRecordOutsideTheRingsFramingStopsTheInboxAndItsPeersStopWaiting() throws Exception {
        try (Fenceline f = Fenceline.create(ConfigFactory.parseString("""
                fenceline.transports = [shm]
                fenceline.endpoint.keepalive.timeout = 20s
                """))) {
            Worker a = f.newWorker("a").toCompletableFuture().get(10, TimeUnit.SECONDS);
            Worker b = f.newWorker("b").toCompletableFuture().get(10, TimeUnit.SECONDS);
            java.util.concurrent.atomic.AtomicInteger ran = new java.util.concurrent.atomic.AtomicInteger();
            a.setActiveMessageHandler(5, (h, p) -> ran.incrementAndGet());
            Endpoint ep = b.connect(a.address()).toCompletableFuture().get(10, TimeUnit.SECONDS);
            ep.sendActiveMessage(5, ByteBuffer.allocate(0), ByteBuffer.allocate(8)).toCompletableFuture()
                    .get(10, TimeUnit.SECONDS);
            assertEquals(1, ran.get());
            java.util.concurrent.atomic.AtomicInteger ranAtB = new java.util.concurrent.atomic.AtomicInteger();
            b.setActiveMessageHandler(6, (h, p) -> ranAtB.incrementAndGet());
            Endpoint back = a.connect(b.address()).toCompletableFuture().get(10, TimeUnit.SECONDS); // answers come to a
            ManyToOneRingBuffer ring = inboxOf(a);
            int at = ring.tryClaim(9, 16);
            ring.buffer().putIntOrdered(at - 8, 0x1000_0000); // the header's length, past the ring
            // Sent before a reads past the break, as a rule: b runs it and answers into a's inbox,
            // behind the broken record; the answer is lost, so it ends as outcome unknown, not waiting
            // (if a found the break first, b never runs it, and it ends as not applied).
            java.util.concurrent.CompletableFuture<Void> taken = back.sendActiveMessage(6, ByteBuffer.allocate(0),
                    ByteBuffer.allocate(8)).toCompletableFuture();
            // Likewise a connect whose answer would come to a's inbox: it fails when a finds the break.
            long dialed = System.nanoTime();
            java.util.concurrent.atomic.AtomicLong dialEnded = new java.util.concurrent.atomic.AtomicLong();
            java.util.concurrent.CompletableFuture<Endpoint> dialing = a.connect(b.address()).toCompletableFuture()
                    .whenComplete((x, t) -> dialEnded.set(System.nanoTime()));
            java.util.concurrent.CompletableFuture<Void> waiting = ep.sendActiveMessage(5, ByteBuffer.allocate(0),
                    ByteBuffer.allocate(8)).toCompletableFuture();
            long start = System.nanoTime();
            java.util.concurrent.ExecutionException e = org.junit.jupiter.api.Assertions.assertThrows(
                    java.util.concurrent.ExecutionException.class, () -> waiting.get(30, TimeUnit.SECONDS),
                    "the message behind the broken record is never read; its sender must not wait for ever");
            long ms = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start);
            org.junit.jupiter.api.Assertions.assertInstanceOf(dev.fenceline.FencelineException.class, e.getCause());
            org.junit.jupiter.api.Assertions.assertTrue(ms < 5_000, "failed in " + ms
                    + " ms: at the peer's next liveness tick, not at keepalive's timeout (20 s)");
            assertEquals(1, ran.get(), "nothing past the broken record was read");
            java.util.concurrent.ExecutionException lost = org.junit.jupiter.api.Assertions.assertThrows(
                    java.util.concurrent.ExecutionException.class, () -> taken.get(5, TimeUnit.SECONDS),
                    "a message whose answer went into the broken inbox ends, and at once");
            if (lost.getCause() instanceof dev.fenceline.OutcomeUnknownException) {
                long until = System.nanoTime() + TimeUnit.SECONDS.toNanos(5);
                while (ranAtB.get() == 0 && System.nanoTime() < until) {
                    Thread.sleep(5); // b took it: its handler runs (or ran) once
                }
                assertEquals(1, ranAtB.get(), "outcome unknown: b had taken the message");
            } else {
                org.junit.jupiter.api.Assertions.assertInstanceOf(dev.fenceline.EndpointFailedException.class,
                        lost.getCause());
                Thread.sleep(200);
                assertEquals(0, ranAtB.get(), "not applied, and never will be: " + lost.getCause());
            }
            System.out.println("the message sent at the break ended as " + lost.getCause().getClass().getSimpleName());
            java.util.concurrent.ExecutionException notConnected = org.junit.jupiter.api.Assertions.assertThrows(
                    java.util.concurrent.ExecutionException.class, () -> dialing.get(10, TimeUnit.SECONDS));
            org.junit.jupiter.api.Assertions.assertTrue(String.valueOf(notConnected.getCause().getMessage())
                    .contains("outside the ring's protocol"), "named, not a timeout: " + notConnected.getCause());
            org.junit.jupiter.api.Assertions.assertTrue(dialEnded.get() - dialed < TimeUnit.SECONDS.toNanos(4),
                    "the connect at the break failed before its connect-timeout (5 s)");
            // The broken worker's own lanes, whose answers would come to its inbox, fail too (the
            // peer's heartbeat would keep them up), and it connects no more.
            long since = System.nanoTime();
            java.util.concurrent.ExecutionException own = org.junit.jupiter.api.Assertions.assertThrows(
                    java.util.concurrent.ExecutionException.class, () -> back.sendActiveMessage(6, ByteBuffer.allocate(0),
                            ByteBuffer.allocate(8)).toCompletableFuture().get(30, TimeUnit.SECONDS));
            org.junit.jupiter.api.Assertions.assertInstanceOf(dev.fenceline.FencelineException.class, own.getCause());
            org.junit.jupiter.api.Assertions.assertTrue(System.nanoTime() - since < TimeUnit.SECONDS.toNanos(5),
                    "the broken worker's own message failed at once, not at a timeout");
            java.util.concurrent.ExecutionException refused = org.junit.jupiter.api.Assertions.assertThrows(
                    java.util.concurrent.ExecutionException.class,
                    () -> a.connect(b.address()).toCompletableFuture().get(10, TimeUnit.SECONDS));
            org.junit.jupiter.api.Assertions.assertTrue(String.valueOf(refused.getCause().getMessage())
                    .contains("outside the ring's protocol"), String.valueOf(refused.getCause()));
        }
    }

    @Test
    void malformedRecordsAreDroppedAndTheWorkerKeepsServing() throws Exception {
        try (Fenceline f = Fenceline.create(ConfigFactory.parseString("fenceline.transports = [shm]"))) {
            Worker a = f.newWorker("a").toCompletableFuture().get(10, TimeUnit.SECONDS);
            Worker b = f.newWorker("b").toCompletableFuture().get(10, TimeUnit.SECONDS);
            MemoryRegion counter = b.register(ByteBuffer.allocateDirect(64)); // through b's inbox
            RemoteKey key = a.unpackRemoteKey(counter.remoteKey().toBytes());
            Endpoint ep = a.connect(b.address()).toCompletableFuture().get(10, TimeUnit.SECONDS);
            ManyToOneRingBuffer inbox = inboxOf(b);
            String own = controlOf(a);
            write(inbox, ShmWire.CONNECT, connect(0, 1 << 30, own)); // a name far past the record
            write(inbox, ShmWire.CONNECT, connect(0, -5, own));
            write(inbox, ShmWire.CONNECT, connect(1 << 24, own.length(), own)); // a gate a does not have
            write(inbox, ShmWire.CONNECT, connect(0, 12, "/etc/passwd!")); // not a control segment
            write(inbox, ShmWire.CONNECT, new byte[10]); // cut short
            SplittableRandom rnd = new SplittableRandom(20261201L);
            int[] types = {ShmWire.CONNECTED, ShmWire.PUT, ShmWire.GET, ShmWire.ATOMIC, ShmWire.AM, ShmWire.FLUSH,
                ShmWire.ACK, ShmWire.GET_DATA, ShmWire.NACK, ShmWire.FLUSHED, ShmWire.BYE, 77};
            for (int i = 0; i < 5000; i++) {
                byte[] junk = new byte[rnd.nextInt(120)];
                rnd.nextBytes(junk);
                write(inbox, types[rnd.nextInt(types.length)], junk);
                if (i % 500 == 0) { // interleaved with real work, which must not notice
                    ep.atomicFetch64(AtomicOp.ADD, key.baseAddress(), key, 1).toCompletableFuture()
                            .get(10, TimeUnit.SECONDS);
                }
            }
            long v = ep.atomicFetch64(AtomicOp.ADD, key.baseAddress(), key, 1).toCompletableFuture()
                    .get(10, TimeUnit.SECONDS);
            assertEquals(10, v, "every real ADD applied once, in order, among the junk");
            Endpoint fresh = a.connect(b.address()).toCompletableFuture().get(10, TimeUnit.SECONDS);
            fresh.flush().toCompletableFuture().get(10, TimeUnit.SECONDS);
        }
    }

    /**
     * One peer worker cannot make a worker hold more of its connections than max-lanes: CONNECTs
     * past it go unanswered while the connections it has keep working, and a closed one makes room
     * again. The peer is one of the test's making, with a gate opened for each connection.
     */
    @Test
    void connectionsPerPeerProcessAreCapped() throws Exception {
        try (Fenceline f = Fenceline.create(ConfigFactory.parseString("""
                fenceline.transports = [shm]
                fenceline.transport.shm.max-lanes = 3
                """));
                FakeShmPeer fake = FakeShmPeer.create(64 << 10)) {
            Worker b = f.newWorker("b").toCompletableFuture().get(10, TimeUnit.SECONDS);
            for (int gate = 0; gate < 3; gate++) {
                long conn = 1000 + gate;
                fake.inbox.gates.open(gate, conn);
                fake.sendConnect(b, gate, conn);
                org.junit.jupiter.api.Assertions.assertTrue(fake.connected(conn, 10_000), "connection " + gate
                        + " of 3 answered");
            }
            fake.inbox.gates.open(3, 1003);
            fake.sendConnect(b, 3, 1003);
            FakeShmPeer.write(FakeShmPeer.inboxOf(b), ShmWire.FLUSH, flush(1001, 5));
            fake.await(m -> m.type() == ShmWire.FLUSHED && m.getLong(ShmWire.TOKEN) == 5, "the FLUSHED of a"
                    + " connection it has");
            // b answers in order: a CONNECTED for the fourth would have come before that FLUSHED
            org.junit.jupiter.api.Assertions.assertFalse(fake.connected(1003, 0), "a fourth connection answered");

            fake.inbox.gates.revoke(1); // closed as an origin closes: its gate revoked, then its BYE
            FakeShmPeer.write(FakeShmPeer.inboxOf(b), ShmWire.BYE, flush(1001, 0));
            fake.inbox.gates.open(1, 1004);
            fake.sendConnect(b, 1, 1004);
            org.junit.jupiter.api.Assertions.assertTrue(fake.connected(1004, 10_000), "a closed connection made room");
        }
    }

    /** A CONNECT naming a gate its origin did not open for it is not the origin's: dropped. */
    @Test
    void aConnectWhoseGateIsNotOpenForItIsDropped() throws Exception {
        try (Fenceline f = Fenceline.create(ConfigFactory.parseString("fenceline.transports = [shm]"));
                FakeShmPeer fake = FakeShmPeer.create(64 << 10)) {
            Worker b = f.newWorker("b").toCompletableFuture().get(10, TimeUnit.SECONDS);
            fake.inbox.gates.open(0, 77);
            fake.sendConnect(b, 0, 78); // gate 0 is open for 77, not 78
            fake.sendConnect(b, 1, 79); // gate 1 is not open at all
            fake.sendConnect(b, 0, 77);
            org.junit.jupiter.api.Assertions.assertTrue(fake.connected(77, 10_000), "the true CONNECT answered");
            // b answers in order: a CONNECTED for either forged one would have come before 77's
            org.junit.jupiter.api.Assertions.assertFalse(fake.connected(78, 0) || fake.connected(79, 0),
                    "a CONNECT whose gate is not open for it was answered");
        }
    }

    /**
     * A BYE for a connection whose gate its origin still holds open is not the origin's (it revokes
     * the gate first): dropped, and the connection goes on being served.
     */
    @Test
    void aByeWhileTheGateIsOpenIsDropped() throws Exception {
        try (Fenceline f = Fenceline.create(ConfigFactory.parseString("fenceline.transports = [shm]"));
                FakeShmPeer fake = FakeShmPeer.create(64 << 10)) {
            Worker b = f.newWorker("b").toCompletableFuture().get(10, TimeUnit.SECONDS);
            long conn = fake.connect(b);
            FakeShmPeer.write(FakeShmPeer.inboxOf(b), ShmWire.BYE, flush(conn, 0));
            FakeShmPeer.write(FakeShmPeer.inboxOf(b), ShmWire.FLUSH, flush(conn, 9));
            fake.await(m -> m.type() == ShmWire.FLUSHED && m.getLong(ShmWire.TOKEN) == 9, "the FLUSHED after the"
                    + " forged BYE");
        }
    }

    /**
     * A request whose sequence number or low-water mark is below -1 ("without exactly-once") is
     * nothing an origin sends: refused with a NACK naming it, not applied; one with -1 is applied.
     */
    @Test
    void aSequenceNumberOrLowWaterMarkBelowMinusOneIsRefusedNamingIt() throws Exception {
        try (Fenceline f = Fenceline.create(ConfigFactory.parseString("fenceline.transports = [shm]"));
                FakeShmPeer fake = FakeShmPeer.create(64 << 10)) {
            Worker b = f.newWorker("b").toCompletableFuture().get(10, TimeUnit.SECONDS);
            ByteBuffer memory = ByteBuffer.allocateDirect(64).order(java.nio.ByteOrder.nativeOrder());
            RemoteKey key = b.register(memory).remoteKey();
            long conn = fake.connect(b);
            FakeShmPeer.write(FakeShmPeer.inboxOf(b), ShmWire.PUT, put(conn, 1, -5, 0, key, 77));
            FakeShmPeer.Message refused = fake.await(m -> m.getLong(ShmWire.TOKEN) == 1, "an answer to the PUT");
            assertEquals(ShmWire.NACK, refused.type(), ShmWire.name(refused.type()));
            org.junit.jupiter.api.Assertions.assertTrue(refused.text(20).contains("sequence number -5"),
                    refused.text(20));
            FakeShmPeer.write(FakeShmPeer.inboxOf(b), ShmWire.PUT, put(conn, 2, 3, Long.MIN_VALUE, key, 77));
            refused = fake.await(m -> m.getLong(ShmWire.TOKEN) == 2, "an answer to the second PUT");
            assertEquals(ShmWire.NACK, refused.type(), ShmWire.name(refused.type()));
            org.junit.jupiter.api.Assertions.assertTrue(refused.text(20).contains("low-water mark " + Long.MIN_VALUE),
                    refused.text(20));
            assertEquals(0, memory.getLong(0), "written by a refused put");
            FakeShmPeer.write(FakeShmPeer.inboxOf(b), ShmWire.PUT, put(conn, 3, -1, -1, key, 77));
            FakeShmPeer.Message applied = fake.await(m -> m.getLong(ShmWire.TOKEN) == 3, "an answer to the third PUT");
            assertEquals(ShmWire.ACK, applied.type(), ShmWire.name(applied.type()));
            assertEquals(77, memory.getLong(0));
        }
    }

    /** @return a PUT record of the 8-byte {@code value} at the start of {@code key}'s region */
    private static byte[] put(long conn, long token, long seq, long low, RemoteKey key, long value) {
        return ByteBuffer.allocate(ShmWire.RMA_DATA + 8).order(java.nio.ByteOrder.nativeOrder())
                .putLong(ShmWire.CONN, conn).putLong(ShmWire.TOKEN, token).putLong(ShmWire.ORIGIN, 42)
                .putLong(ShmWire.SEQ, seq).putLong(ShmWire.LOW, low).putLong(ShmWire.BODY, key.keyId())
                .putLong(ShmWire.BODY + 8, key.baseAddress()).putLong(ShmWire.RMA_DATA, value).array();
    }

    /** @return a FLUSH record of {@code conn} (its first 8 bytes are a BYE's) */
    private static byte[] flush(long conn, long token) {
        return ByteBuffer.allocate(16).order(java.nio.ByteOrder.nativeOrder()).putLong(0, conn).putLong(8, token)
                .array();
    }
}
