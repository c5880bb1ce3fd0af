package dev.fenceline.transport.tcp;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.typesafe.config.ConfigFactory;
import dev.fenceline.AtomicOp;
import dev.fenceline.Endpoint;
import dev.fenceline.Fenceline;
import dev.fenceline.MemoryRegion;
import dev.fenceline.RemoteKey;
import dev.fenceline.Worker;
import java.io.IOException;
import java.lang.management.BufferPoolMXBean;
import java.lang.management.ManagementFactory;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.SocketChannel;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Peers that try to make a target hold too much, measured: 2,000 half-open connections from one
 * address, and authenticated peers that grow dedup windows as far as the format lets them under
 * many origin ids. Each is refused or bounded by its documented limit, the heap and direct memory
 * the target holds are printed before, during and after, and a well-behaved peer's workload (from
 * another address) completes meanwhile with nothing lost.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class TcpHostilePeersTest {
    private static final int WINDOW = 262_144;
    private Fenceline targetSide;
    private Fenceline goodSide;
    private Worker target;
    private Worker good;
    private InetSocketAddress listening;

    @BeforeEach
    void start() throws Exception {
        targetSide = Fenceline.create(ConfigFactory.parseString("""
                fenceline.transport.tcp.connect-timeout = 2s
                fenceline.exactly-once { window = %d, entries-per-peer = %d, entries = %d }
                """.formatted(WINDOW, 2 * WINDOW, 16 * WINDOW)).withFallback(TcpConfigs.loopback("127.0.0.1:0")));
        target = await(targetSide.newWorker("target"));
        listening = TcpAddress.decode(target.address().transportAddress("tcp")).get(0);
        goodSide = Fenceline.create(TcpConfigs.loopback("127.0.0.1:0"));
        good = await(goodSide.newWorker("good"));
    }

    @AfterEach
    void stop() throws InterruptedException {
        if (goodSide != null) {
            goodSide.close();
        }
        if (targetSide != null) {
            targetSide.close();
        }
        LeakGuard.assertNoLeaks();
    }

    private static <T> T await(CompletionStage<T> s) throws Exception {
        return s.toCompletableFuture().get(60, TimeUnit.SECONDS);
    }

    /** Heap in use after a collection, and direct buffers, in MiB. */
    private record Memory(double heap, double direct) {
        static Memory now() {
            System.gc();
            System.gc();
            long direct = 0;
            for (BufferPoolMXBean b : ManagementFactory.getPlatformMXBeans(BufferPoolMXBean.class)) {
                if (b.getName().equals("direct")) {
                    direct += b.getMemoryUsed();
                }
            }
            direct += Math.max(0, io.netty.util.internal.PlatformDependent.usedDirectMemory());
            return new Memory(ManagementFactory.getMemoryMXBean().getHeapMemoryUsage().getUsed() / 1048576.0,
                    direct / 1048576.0);
        }

        @Override
        public String toString() {
            return String.format("heap %.1f MiB, direct %.1f MiB", heap, direct);
        }
    }

    /** 1,000 fetch-adds and 100 puts of 4 KiB with their read-back: every one applied once, every byte there. */
    private void wellBehavedWorkload() throws Exception {
        MemoryRegion region = target.allocate(1 << 20);
        Endpoint ep = await(good.connect(target.address()));
        RemoteKey key = good.unpackRemoteKey(region.remoteKey().toBytes());
        List<CompletableFuture<Long>> adds = new ArrayList<>();
        for (int i = 0; i < 1000; i++) {
            adds.add(ep.atomicFetch64(AtomicOp.ADD, region.address(), key, 1).toCompletableFuture());
        }
        byte[] data = new byte[4096];
        new Random(11).nextBytes(data);
        for (int i = 0; i < 100; i++) {
            await(ep.put(ByteBuffer.wrap(data), region.address() + 4096L * (i + 1), key));
        }
        CompletableFuture.allOf(adds.toArray(CompletableFuture[]::new)).get(60, TimeUnit.SECONDS);
        assertEquals(1000, region.buffer().getLong(0), "every fetch-add applied once");
        for (int i = 0; i < 100; i++) {
            byte[] back = new byte[4096];
            region.buffer().get(4096 * (i + 1), back);
            assertArrayEquals(data, back, "put " + i);
        }
        assertEquals(0, good.statistics().failed(), good.statistics().toString());
        ep.close();
    }

    @Test
    void twoThousandHalfOpenConnectionsAreBoundedAndDropped() throws Exception {
        Memory before = Memory.now();
        List<SocketChannel> half = new ArrayList<>();
        byte[] partialHello = {0, 0, 0, 70, Wire.VERSION, Wire.HELLO, 0, 2, 0, 2};
        try {
            for (int i = 0; i < 2000; i++) {
                SocketChannel c = SocketChannel.open();
                c.bind(new InetSocketAddress("127.0.0.3", 0)); // the attacker's address; the good peer has its own
                c.connect(listening);
                c.write(ByteBuffer.wrap(partialHello));
                c.configureBlocking(false);
                half.add(c);
            }
            int held = settledAt(half, 1024);
            Memory during = Memory.now();
            wellBehavedWorkload();
            System.out.printf("TcpHostilePeersTest: 2,000 half-open connections from one address: %d held (limit"
                    + " connections-per-address = 1024), %d refused; %s before, %s while held%n", held, 2000 - held,
                    before, during);
            assertEquals(1024, held, "the per-address limit holds, and pre-auth-connections (1024)");
            assertTrue(during.direct() - before.direct() < 64, "direct memory held: " + before + " -> " + during);
            assertTrue(during.heap() - before.heap() < 128, "heap held: " + before + " -> " + during);
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
            while (open(half) > 0 && System.nanoTime() < deadline) {
                Thread.sleep(100);
            }
            assertEquals(0, open(half), "the handshake timeout closes every half-open connection");
            System.out.printf("TcpHostilePeersTest: after the handshake timeout: %s%n", Memory.now());
            wellBehavedWorkload();
        } finally {
            for (SocketChannel c : half) {
                c.close();
            }
        }
    }

    /**
     * Connections that never authenticate, more than every connection slot: they take at most
     * pre-auth-connections of them, newer ones pushing the oldest out, and a real peer still
     * connects and works meanwhile.
     */
    @org.junit.jupiter.params.ParameterizedTest
    @org.junit.jupiter.params.provider.CsvSource({"64, 16", "16, 16"}) // 16 of 16: a new one pushes one out
    void connectionsThatNeverAuthenticateCannotTakeEverySlot(int connections, int preAuth) throws Exception {
        targetSide.close();
        targetSide = Fenceline.create(ConfigFactory.parseString("""
                fenceline.transport.tcp.connect-timeout = 20s
                fenceline.transport.tcp.limits { connections = %d, connections-per-address = %d }
                """.formatted(connections, connections)).withFallback(TcpConfigs.loopback("127.0.0.1:0"))
                .withFallback(ConfigFactory.parseString(connections > preAuth
                        ? "fenceline.transport.tcp.limits.pre-auth-connections = " + preAuth : "")));
        target = await(targetSide.newWorker("target"));
        listening = TcpAddress.decode(target.address().transportAddress("tcp")).get(0);
        List<SocketChannel> half = new ArrayList<>();
        byte[] partialHello = {0, 0, 0, 70, Wire.VERSION, Wire.HELLO, 0, 2, 0, 2};
        // A handshake under way from another address before the flood (a slow peer's): the flood
        // pushes out its own connections, not this one, the oldest of all.
        SocketChannel slowPeer = SocketChannel.open();
        try {
            slowPeer.bind(new InetSocketAddress("127.0.0.4", 0));
            slowPeer.connect(listening);
            slowPeer.write(ByteBuffer.wrap(partialHello));
            slowPeer.configureBlocking(false);
            for (int i = 0; i < 100; i++) {
                SocketChannel c = SocketChannel.open();
                c.bind(new InetSocketAddress("127.0.0.3", 0));
                c.connect(listening);
                c.write(ByteBuffer.wrap(partialHello));
                c.configureBlocking(false);
                half.add(c);
            }
            int held = settledAt(half, preAuth - 1);
            assertTrue(held <= preAuth - 1, "held while handshaking: " + held + " of the flood, and the slow peer's"
                    + " (pre-auth-connections = " + preAuth + ")");
            assertEquals(1, open(List.of(slowPeer)), "the slow peer's handshake was pushed out by another address's"
                    + " flood");
            wellBehavedWorkload(); // its connection fits, or pushes out one that never authenticated
        } finally {
            slowPeer.close();
            for (SocketChannel c : half) {
                c.close();
            }
        }
    }

    /**
     * Waits, up to a second and a half (the handshake timeout, 2 s, closes them all after), until the
     * target has gone through the connections: at most {@code bound} of them are open.
     *
     * @return how many of them it has not closed
     */
    private static int settledAt(List<SocketChannel> connections, int bound) throws Exception {
        long until = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(1500);
        int open;
        while ((open = open(connections)) > bound && System.nanoTime() < until) {
            Thread.sleep(20);
        }
        return open;
    }

    /** @return how many of the connections the target has not closed */
    private static int open(List<SocketChannel> connections) throws IOException {
        int open = 0;
        ByteBuffer sink = ByteBuffer.allocate(256);
        for (SocketChannel c : connections) {
            int n;
            try {
                do {
                    sink.clear();
                    n = c.read(sink);
                } while (n > 0);
            } catch (IOException reset) {
                n = -1;
            }
            if (n == 0) {
                open++;
            }
        }
        return open;
    }

    /**
     * Authenticated peers push every window they can to its full spread under many origin ids: each
     * gets what fenceline.exactly-once.entries-per-peer allows, everything beyond is refused (NACK naming the
     * key) and not applied, and the target holds at most that much per peer.
     */
    @Test
    void dedupStateIsBoundedPerPeerAndInAll() throws Exception {
        MemoryRegion counter = target.allocate(4096);
        Memory before = Memory.now();
        int granted = 0;
        int refused = 0;
        List<RawPeer> peers = new ArrayList<>();
        try {
            for (int identity = 0; identity < 4; identity++) {
                RawPeer p = new RawPeer(listening, target.address().workerId(), null);
                peers.add(p);
                for (long origin = 1; origin <= 16; origin++) {
                    p.write(FrameEncoder.atomic(io.netty.buffer.UnpooledByteBufAllocator.DEFAULT, origin, origin,
                            WINDOW - 1, 0, counter.remoteKey().keyId(), counter.address(), Wire.ATOMIC_POST,
                            AtomicOp.ADD, 8, 1, 0));
                    List<Object> a = p.answer();
                    if (a.get(0).equals("ACK")) {
                        granted++;
                    } else {
                        refused++;
                        assertTrue(String.valueOf(a.get(4)).contains("fenceline.exactly-once.entries"), a.toString());
                    }
                }
            }
            Memory during = Memory.now();
            wellBehavedWorkload();
            System.out.printf("TcpHostilePeersTest: 4 authenticated peers x 16 origin ids, each window pushed to"
                    + " its %,d-operation spread: %d granted, %d refused; %s before, %s after%n", WINDOW, granted,
                    refused, before, during);
            assertEquals(8, granted, "2 windows per peer (entries-per-peer)");
            assertEquals(4 * 16 - 8, refused);
            assertEquals(granted, counter.buffer().getLong(0), "nothing refused was applied");
            assertTrue(during.heap() - before.heap() < 8 * WINDOW * 17 / 1048576.0 + 48,
                    "heap held: " + before + " -> " + during);
        } finally {
            for (RawPeer p : peers) {
                p.close();
            }
        }
    }
}
