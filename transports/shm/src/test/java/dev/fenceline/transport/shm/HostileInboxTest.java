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
        return Inbox.open(Path.of("/dev/shm", controlOf(w))).ring;
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
     * One peer process cannot make a worker hold more of its connections than max-lanes: CONNECTs
     * past it go unanswered (a connect fails with a typed error after its timeout) while the
     * connections it has keep working, and a closed one makes room again.
     */
    @Test
    void connectionsPerPeerProcessAreCapped() throws Exception {
        try (Fenceline f = Fenceline.create(ConfigFactory.parseString("""
                fenceline.transports = [shm]
                fenceline.transport.shm { max-lanes = 4, connect-timeout = 1s }
                fenceline.endpoint.connect-timeout = 2s
                """))) {
            Worker a = f.newWorker("a").toCompletableFuture().get(10, TimeUnit.SECONDS);
            Worker b = f.newWorker("b").toCompletableFuture().get(10, TimeUnit.SECONDS);
            MemoryRegion counter = b.register(ByteBuffer.allocateDirect(64));
            RemoteKey key = a.unpackRemoteKey(counter.remoteKey().toBytes());
            Endpoint ep = a.connect(b.address()).toCompletableFuture().get(10, TimeUnit.SECONDS);
            ManyToOneRingBuffer inbox = inboxOf(b);
            String own = controlOf(a);
            for (int i = 0; i < 3; i++) { // forged CONNECTs in a's name: with ep's, 4 connections from a at b
                byte[] c = connect(0, own.length(), own);
                ByteBuffer.wrap(c).order(java.nio.ByteOrder.nativeOrder()).putLong(0, 1000 + i);
                write(inbox, ShmWire.CONNECT, c);
            }
            Thread.sleep(200); // b's polling thread takes them
            java.util.concurrent.ExecutionException refused = org.junit.jupiter.api.Assertions.assertThrows(
                    java.util.concurrent.ExecutionException.class, () -> a.connect(b.address()).toCompletableFuture()
                            .get(10, TimeUnit.SECONDS));
            org.junit.jupiter.api.Assertions.assertInstanceOf(dev.fenceline.EndpointFailedException.class,
                    refused.getCause(), refused.toString());
            assertEquals(0L, (long) ep.atomicFetch64(AtomicOp.ADD, key.baseAddress(), key, 1).toCompletableFuture()
                    .get(10, TimeUnit.SECONDS), "the connection a has keeps working");
            ep.close();
            Thread.sleep(200);
            Endpoint again = a.connect(b.address()).toCompletableFuture().get(10, TimeUnit.SECONDS);
            assertEquals(1L, (long) again.atomicFetch64(AtomicOp.ADD, key.baseAddress(), key, 1)
                    .toCompletableFuture().get(10, TimeUnit.SECONDS), "a closed connection made room");
        }
    }
}
