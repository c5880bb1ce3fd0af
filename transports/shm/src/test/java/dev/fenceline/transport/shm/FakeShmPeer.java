package dev.fenceline.transport.shm;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.fenceline.AtomicOp;
import dev.fenceline.Endpoint;
import dev.fenceline.MemoryRegion;
import dev.fenceline.RemoteKey;
import dev.fenceline.Worker;
import dev.fenceline.WorkerAddress;
import dev.fenceline.spi.support.Heartbeat;
import dev.fenceline.spi.support.Host;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import java.util.function.Predicate;
import org.agrona.concurrent.ringbuffer.ManyToOneRingBuffer;

/**
 * A peer process of the test's making: a control segment in /dev/shm of a ring size the test
 * chooses, whose records the test writes and reads by hand, as a hostile or broken peer would.
 */
final class FakeShmPeer implements AutoCloseable {
    /** A record read from this peer's ring: its type and bytes. */
    record Message(int type, byte[] bytes) {
        long getLong(int at) {
            return ByteBuffer.wrap(bytes).order(ByteOrder.nativeOrder()).getLong(at);
        }

        int getInt(int at) {
            return ByteBuffer.wrap(bytes).order(ByteOrder.nativeOrder()).getInt(at);
        }

        /** The text at {@code at}, as long as the u16 just before it says (a NACK's, a RESET's). */
        String text(int at) {
            int n = Short.toUnsignedInt(ByteBuffer.wrap(bytes).order(ByteOrder.nativeOrder()).getShort(at - 2));
            return new String(bytes, at, Math.min(n, bytes.length - at), StandardCharsets.UTF_8);
        }
    }

    final Inbox inbox;
    final Path file;
    private final UUID worker = UUID.randomUUID();
    private final List<Message> unread = new ArrayList<>();

    private FakeShmPeer(Path file, Inbox inbox) {
        this.file = file;
        this.inbox = inbox;
        Heartbeat.start(inbox); // its peers take a segment whose heartbeat stands still for a stopped process
    }

    /** @param ringSize its ring's bytes (a power of two; its largest message is an eighth) */
    static FakeShmPeer create(int ringSize) throws Exception {
        Path file = Path.of("/dev/shm", Segments.processPrefix() + "0fa4e000-" + Segments.unguessable() + "-ctl");
        return new FakeShmPeer(file, Inbox.create(file, ringSize, 1, 4, UUID.randomUUID(), true));
    }

    /** @return its address, as a worker's shm part would carry it */
    WorkerAddress address() {
        byte[] shm = new ShmAddress(Host.bootId() + " " + Host.pidNamespaceId(), Host.pid(), Host.startTime(),
                file.getFileName().toString()).encode();
        return new WorkerAddress(worker, "fake", Map.of(ShmTransportProvider.NAME, shm));
    }

    /** @return a new worker of {@code f} (within 10 s) */
    static Worker worker(dev.fenceline.Fenceline f, String name) throws Exception {
        return f.newWorker(name).toCompletableFuture().get(10, TimeUnit.SECONDS);
    }

    /** @return the inbox ring of a worker of this process */
    static ManyToOneRingBuffer inboxOf(Worker w) throws Exception {
        return Inbox.open(Path.of("/dev/shm", HostileInboxTest.controlOf(w)), true).ring;
    }

    /**
     * Connects to {@code target} as an origin: opens gate 0 for a new connection, writes the CONNECT
     * into the target's inbox and waits for its CONNECTED.
     *
     * @return the connection id
     */
    long connect(Worker target) throws Exception {
        long conn = 0x0fa4_e000_0000_0001L;
        inbox.gates.open(0, conn);
        sendConnect(target, 0, conn);
        Message connected = await(m -> m.type() == ShmWire.CONNECTED && m.getLong(0) == conn, "CONNECTED");
        assertTrue(connected.bytes().length >= 12, "a CONNECTED of " + connected.bytes().length + " bytes");
        return conn;
    }

    /** Writes a CONNECT for {@code conn} naming gate {@code gate} (opened or not) into the target's inbox. */
    void sendConnect(Worker target, int gate, long conn) throws Exception {
        byte[] name = file.getFileName().toString().getBytes(StandardCharsets.UTF_8);
        org.agrona.concurrent.UnsafeBuffer b = new org.agrona.concurrent.UnsafeBuffer(
                new byte[ShmRecords.connectLength(name)]);
        ShmRecords.connect(b, 0, conn, worker, gate, name);
        write(inboxOf(target), ShmWire.CONNECT, b.byteArray());
    }

    /** @return whether a CONNECTED for {@code conn} comes within {@code millis} */
    boolean connected(long conn, long millis) throws InterruptedException {
        return poll(m -> m.type() == ShmWire.CONNECTED && m.getLong(0) == conn, millis) != null;
    }

    /**
     * As a target: answers the next CONNECT from {@code origin} with a CONNECTED claiming {@code limit}.
     *
     * @return the connection id
     */
    long answerConnect(Worker origin, int limit) throws Exception {
        long conn = await(m -> m.type() == ShmWire.CONNECT, "a CONNECT").getLong(0);
        ByteBuffer connected = ByteBuffer.allocate(12).order(ByteOrder.nativeOrder());
        connected.putLong(0, conn).putInt(8, limit);
        write(inboxOf(origin), ShmWire.CONNECTED, connected.array());
        return conn;
    }

    /** An endpoint to this peer and the connection id it answered. */
    record Accepted(Endpoint endpoint, long conn) {
    }

    /** As a target: {@code origin} connects, and this answers with a CONNECTED claiming {@code limit}. */
    Accepted accept(Worker origin, int limit) throws Exception {
        java.util.concurrent.CompletableFuture<Endpoint> connecting = origin.connect(address()).toCompletableFuture();
        long conn = answerConnect(origin, limit);
        return new Accepted(connecting.get(10, TimeUnit.SECONDS), conn);
    }

    /** Checks that {@code target} still serves another worker: a new endpoint's first fetch-add. */
    static void assertServes(Worker origin, Worker target) throws Exception {
        MemoryRegion counter = target.register(ByteBuffer.allocateDirect(64));
        RemoteKey key = origin.unpackRemoteKey(counter.remoteKey().toBytes());
        Endpoint ep = origin.connect(target.address()).toCompletableFuture().get(10, TimeUnit.SECONDS);
        assertEquals(0L, (long) ep.atomicFetch64(AtomicOp.ADD, key.baseAddress(), key, 1).toCompletableFuture()
                .get(10, TimeUnit.SECONDS), target + " still serves its other peers");
    }

    /** Writes one record into {@code ring}, failing the test if it has no room. */
    static void write(ManyToOneRingBuffer ring, int type, byte[] body) {
        int at = ring.tryClaim(type, body.length);
        assertTrue(at >= 0, "no room in the ring for a " + ShmWire.name(type));
        ring.buffer().putBytes(at, body);
        ring.commit(at);
    }

    /** @return a GET's record: {@code n} bytes at {@code address} of key {@code key}, without exactly-once */
    static byte[] get(long conn, long token, long key, long address, int n) {
        ByteBuffer b = ByteBuffer.allocate(ShmWire.GET_LENGTH + 4).order(ByteOrder.nativeOrder());
        b.putLong(ShmWire.CONN, conn).putLong(ShmWire.TOKEN, token).putLong(ShmWire.SEQ, -1)
                .putLong(ShmWire.BODY, key).putLong(ShmWire.BODY + 8, address).putInt(ShmWire.GET_LENGTH, n);
        return b.array();
    }

    /** Waits up to 10 s for a record of this peer's ring that {@code wanted} accepts (earlier ones kept). */
    Message await(Predicate<Message> wanted, String what) throws InterruptedException {
        Message m = poll(wanted, 10_000);
        assertTrue(m != null, "no " + what + " came in 10 s; read " + unread.size() + " other records");
        return m;
    }

    /** @return the first record {@code wanted} accepts that comes within {@code millis} (earlier ones kept), or null */
    Message poll(Predicate<Message> wanted, long millis) throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(millis);
        while (true) {
            for (Message m : unread) {
                if (wanted.test(m)) {
                    unread.remove(m);
                    return m;
                }
            }
            int read = inbox.ring.read((type, buffer, at, length) -> {
                byte[] bytes = new byte[length];
                buffer.getBytes(at, bytes);
                unread.add(new Message(type, bytes));
            });
            if (read == 0) {
                if (System.nanoTime() > deadline) {
                    return null;
                }
                Thread.sleep(1);
            }
        }
    }

    /** @return the next record not yet taken (kept from an {@link #await}, or read now), or null */
    Message pollRead() {
        if (unread.isEmpty()) {
            inbox.ring.read((type, buffer, at, length) -> {
                byte[] bytes = new byte[length];
                buffer.getBytes(at, bytes);
                unread.add(new Message(type, bytes));
            }, 1);
        }
        return unread.isEmpty() ? null : unread.remove(0);
    }

    @Override
    public void close() {
        Heartbeat.stop(inbox);
        Segments.remove(file);
    }
}
