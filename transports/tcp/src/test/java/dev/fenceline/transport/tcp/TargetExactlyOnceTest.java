package dev.fenceline.transport.tcp;

import dev.fenceline.spi.support.ExactlyOnceWindows;
import com.typesafe.config.ConfigFactory;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.fenceline.ActiveMessageException;
import dev.fenceline.AtomicOp;
import dev.fenceline.spi.RemoteAccessTarget;
import dev.fenceline.spi.TransportContext;
import dev.fenceline.spi.support.WireCodes;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.channel.embedded.EmbeddedChannel;
import java.nio.ByteBuffer;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import java.util.concurrent.TimeUnit;

/**
 * The target side of exactly-once, frame by frame on two authenticated connections (two rails) of
 * one origin endpoint: a copy re-sent over the other rail gets the first copy's outcome, a refused
 * operation (a throwing active-message handler) is refused again rather than run twice, a stale copy
 * below the origin's low-water mark is never applied, and one beyond the window is not applied.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class TargetExactlyOnceTest {
    private static final long ORIGIN = 0x0123_4567_89ABL;
    private final AtomicInteger puts = new AtomicInteger();
    private final AtomicInteger adds = new AtomicInteger();
    private final AtomicInteger messages = new AtomicInteger();
    /** If set: the handler says it runs ([0]), then waits for [1] to open. */
    private volatile java.util.concurrent.CountDownLatch[] handlerGate;
    /** Added to the windows' clock. */
    private final java.util.concurrent.atomic.AtomicLong skew = new java.util.concurrent.atomic.AtomicLong();
    private final UUID me = UUID.randomUUID();
    private static final UUID CLIENT = UUID.randomUUID();
    private TcpTransport transport;

    /** Counts what it applies; the active-message handler always throws after running. */
    private final RemoteAccessTarget target = new RemoteAccessTarget() {
        @Override
        public void put(long keyId, long address, ByteBuffer src) {
            puts.incrementAndGet();
        }

        @Override
        public void get(long keyId, long address, ByteBuffer dst) {
        }

        @Override
        public long atomic(long keyId, long address, int width, AtomicOp op, long operand) {
            return 100 + adds.getAndIncrement();
        }

        @Override
        public long compareAndSwap(long keyId, long address, int width, long expected, long desired) {
            return 0;
        }

        @Override
        public void activeMessage(int id, ByteBuffer header, ByteBuffer payload) {
            messages.incrementAndGet();
            java.util.concurrent.CountDownLatch[] gate = handlerGate;
            if (gate != null) {
                gate[0].countDown();
                try {
                    gate[1].await(); // the test's finally opens it
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
            }
            throw new ActiveMessageException("handler " + id + " threw after a side effect");
        }
    };

    @BeforeEach
    void start() {
        start(1 << 21);
    }

    /** A transport whose worker's windows hold 8,192 operations each, and {@code perPeer} entries per peer. */
    private void start(long perPeer) {
        com.typesafe.config.Config section = ConfigFactory.parseString("secret = \"" + TcpConfigs.SECRET
                + "\"\nmax-rails = 2\nqueue-depth = 64")
                .withFallback(ConfigFactory.defaultReference().getConfig(TcpSettings.SECTION));
        windows = new ExactlyOnceWindows("worker 'target'", 8192, java.time.Duration.ofMinutes(10), perPeer,
                1L << 24, () -> System.nanoTime() + skew.get());
        transport = new TcpTransport(new TransportContext(me, "target", section, target, windows),
                TcpSettings.fromSection(section));
    }

    private ExactlyOnceWindows windows;

    @AfterEach
    void stop() throws InterruptedException {
        transport.close();
        LeakGuard.assertNoLeaks();
    }

    @Test
    void eachOperationTakesEffectOnceWhicheverRailCarriesIt() throws Exception {
        EmbeddedChannel rail1 = authenticated();
        EmbeddedChannel rail2 = authenticated();

        send(rail1, FrameEncoder.atomic(rail1.alloc(), 1, ORIGIN, 0, 0, 9, 64, Wire.ATOMIC_FETCH, AtomicOp.ADD, 8, 1,
                0));
        assertEquals(List.of("ACK", 1L, 100L), reply(rail1));
        send(rail2, FrameEncoder.atomic(rail2.alloc(), 2, ORIGIN, 0, 0, 9, 64, Wire.ATOMIC_FETCH, AtomicOp.ADD, 8, 1,
                0));
        assertEquals(List.of("ACK", 2L, 100L), reply(rail2), "the re-sent copy gets the first result");
        assertEquals(1, adds.get(), "applied once");

        send(rail1, FrameEncoder.putHeader(rail1.alloc(), 3, ORIGIN, 1, 0, 9, 64, 4), Unpooled.wrappedBuffer(
                new byte[4]));
        send(rail2, FrameEncoder.putHeader(rail2.alloc(), 4, ORIGIN, 1, 0, 9, 64, 4), Unpooled.wrappedBuffer(
                new byte[4]));
        assertEquals(List.of("ACK", 3L, 0L), reply(rail1));
        assertEquals(List.of("ACK", 4L, 0L), reply(rail2));
        assertEquals(1, puts.get());

        send(rail1, FrameEncoder.activeMessageHeader(rail1.alloc(), 5, ORIGIN, 2, 0, 7, 0, 0));
        List<Object> first = reply(rail1);
        send(rail2, FrameEncoder.activeMessageHeader(rail2.alloc(), 6, ORIGIN, 2, 0, 7, 0, 0));
        List<Object> again = reply(rail2);
        assertEquals("NACK", first.get(0));
        assertEquals(List.of("NACK", 6L, WireCodes.ACTIVE_MESSAGE, 0, first.get(4)), again,
                "the refusal is repeated");
        assertEquals(1, messages.get(), "a handler that threw is not run again for the re-sent copy");
    }

    @Test
    void staleAndOutOfWindowCopiesAreNeverApplied() throws Exception {
        EmbeddedChannel rail = authenticated();
        // The origin says everything below 5 completed: a late copy of 3 is stale.
        send(rail, FrameEncoder.atomic(rail.alloc(), 1, ORIGIN, 6, 5, 9, 64, Wire.ATOMIC_POST, AtomicOp.ADD, 8, 1, 0));
        assertEquals("ACK", reply(rail).get(0));
        send(rail, FrameEncoder.atomic(rail.alloc(), 2, ORIGIN, 3, 0, 9, 64, Wire.ATOMIC_POST, AtomicOp.ADD, 8, 1, 0));
        List<Object> stale = reply(rail);
        assertEquals("NACK", stale.get(0));
        assertEquals(WireCodes.OUTCOME_UNKNOWN, stale.get(2));
        send(rail, FrameEncoder.atomic(rail.alloc(), 3, ORIGIN, 5 + 8192, 5, 9, 64, Wire.ATOMIC_POST, AtomicOp.ADD, 8,
                1, 0));
        List<Object> full = reply(rail);
        assertEquals("NACK", full.get(0));
        assertTrue(((String) full.get(4)).contains("fenceline.exactly-once.window = 8192"), full.toString());
        assertEquals(1, adds.get(), "only the first was applied");
    }

    /**
     * A handler (on the handler threads) outlives its connection and the linger: its window stays,
     * so a copy re-sent over a new rail is not run a second time; it waits, with the frames after
     * it, for the first copy's outcome and is answered with it. Then the window goes after the linger.
     */
    @Test
    void aHandlerStillRunningKeepsItsWindowPastItsConnectionAndTheLinger() throws Exception {
        java.util.concurrent.CountDownLatch running = new java.util.concurrent.CountDownLatch(1);
        java.util.concurrent.CountDownLatch release = new java.util.concurrent.CountDownLatch(1);
        handlerGate = new java.util.concurrent.CountDownLatch[] {running, release};
        try {
            EmbeddedChannel rail1 = authenticated();
            send(rail1, FrameEncoder.activeMessageHeader(rail1.alloc(), 5, ORIGIN, 2, 0, 7, 0, 0));
            assertTrue(running.await(10, TimeUnit.SECONDS), "the handler runs");
            rail1.close(); // the rail fails while it runs: its window is released
            skew.addAndGet(java.time.Duration.ofMinutes(11).toNanos());
            assertEquals(1, windows.size(), "the window of a running handler expired at the linger");
            EmbeddedChannel rail2 = authenticated();
            send(rail2, FrameEncoder.activeMessageHeader(rail2.alloc(), 6, ORIGIN, 2, 0, 7, 0, 0));
            send(rail2, FrameEncoder.putHeader(rail2.alloc(), 7, ORIGIN, 3, 0, 9, 64, 4),
                    Unpooled.wrappedBuffer(new byte[4]));
            rail2.runPendingTasks();
            assertNull(rail2.readOutbound(), "no answer while the first copy runs: its outcome is not known");
            assertEquals(0, puts.get(), "the put after it waits in order");
            release.countDown();
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
            while (puts.get() == 0) {
                assertTrue(System.nanoTime() < deadline, "the first handler's outcome never reached the waiting copy");
                rail1.runPendingTasks(); // where the handler thread hands its outcome back
                rail2.runPendingTasks(); // where the waiting copy is answered, and the put applied
                Thread.onSpinWait();
            }
            List<Object> after = reply(rail2);
            assertEquals(List.of("NACK", 6L, WireCodes.ACTIVE_MESSAGE), after.subList(0, 3),
                    "the first copy's outcome: " + after);
            assertEquals(List.of("ACK", 7L, 0L), reply(rail2), "then the put, in order");
            assertEquals(1, messages.get(), "the handler ran once");
            rail2.close();
            skew.addAndGet(java.time.Duration.ofMinutes(11).toNanos());
            assertEquals(0, windows.size(), "gone after the linger once nothing runs");
        } finally {
            release.countDown();
            handlerGate = null;
        }
    }

    /**
     * A copy that waits for its first one and the connection ends meanwhile: nothing is answered on
     * it, its frame is released (LeakGuard), and a copy sent again later gets the first's outcome.
     */
    @Test
    void aWaitingCopysConnectionMayEndBeforeTheFirstCopyReturns() throws Exception {
        java.util.concurrent.CountDownLatch running = new java.util.concurrent.CountDownLatch(1);
        java.util.concurrent.CountDownLatch release = new java.util.concurrent.CountDownLatch(1);
        handlerGate = new java.util.concurrent.CountDownLatch[] {running, release};
        try {
            EmbeddedChannel rail1 = authenticated();
            send(rail1, FrameEncoder.activeMessageHeader(rail1.alloc(), 5, ORIGIN, 2, 0, 7, 4, 4),
                    Unpooled.wrappedBuffer(new byte[8]));
            assertTrue(running.await(10, TimeUnit.SECONDS), "the handler runs");
            EmbeddedChannel rail2 = authenticated();
            send(rail2, FrameEncoder.activeMessageHeader(rail2.alloc(), 6, ORIGIN, 2, 0, 7, 4, 4),
                    Unpooled.wrappedBuffer(new byte[8]));
            rail2.runPendingTasks();
            assertNull(rail2.readOutbound(), "it waits");
            rail2.close();
            release.countDown();
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
            List<Object> first = null;
            while (first == null) {
                assertTrue(System.nanoTime() < deadline, "the first copy was never answered");
                rail1.runPendingTasks();
                rail2.runPendingTasks();
                if (rail1.outboundMessages().peek() != null) {
                    first = reply(rail1);
                }
            }
            assertEquals(List.of("NACK", 5L, WireCodes.ACTIVE_MESSAGE), first.subList(0, 3), first.toString());
            EmbeddedChannel rail3 = authenticated();
            send(rail3, FrameEncoder.activeMessageHeader(rail3.alloc(), 8, ORIGIN, 2, 0, 7, 4, 4),
                    Unpooled.wrappedBuffer(new byte[8]));
            assertEquals(List.of("NACK", 8L, WireCodes.ACTIVE_MESSAGE, 0, first.get(4)), reply(rail3));
            assertEquals(1, messages.get(), "the handler ran once");
            rail1.close();
            rail3.close();
        } finally {
            release.countDown();
            handlerGate = null;
        }
    }

    /** A refused peer's active message without a sequence number is not run on the handler threads either. */
    @Test
    void aRefusedPeersUnnumberedActiveMessageIsNotRun() throws Exception {
        EmbeddedChannel rail = authenticated();
        windows.refuse(CLIENT, "its member was downed");
        send(rail, FrameEncoder.activeMessageHeader(rail.alloc(), 9, ORIGIN, -1, -1, 7, 0, 0));
        List<Object> r = reply(rail);
        assertEquals(List.of("NACK", 9L, WireCodes.ENDPOINT_FAILED), r.subList(0, 3), r.toString());
        assertEquals(0, messages.get(), "the handler ran");
    }

    /** Both rails of one origin endpoint come from one worker. */
    /**
     * Origin-id poisoning: another authenticated peer names this endpoint's origin id and its next
     * sequence number first. It reaches a window of its own, so the endpoint's own operation is
     * still applied (not answered from the other peer's entry).
     */
    @Test
    void anotherPeerNamingTheSameOriginReachesAWindowOfItsOwn() throws Exception {
        EmbeddedChannel mine = authenticated();
        EmbeddedChannel attacker = authenticated(UUID.randomUUID());
        send(mine, FrameEncoder.atomic(mine.alloc(), 1, ORIGIN, 0, 0, 9, 64, Wire.ATOMIC_FETCH, AtomicOp.ADD, 8, 1, 0));
        assertEquals(List.of("ACK", 1L, 100L), reply(mine));
        send(attacker, FrameEncoder.atomic(attacker.alloc(), 1, ORIGIN, 1, 0, 9, 64, Wire.ATOMIC_FETCH, AtomicOp.ADD, 8,
                1, 0));
        assertEquals(List.of("ACK", 1L, 101L), reply(attacker), "the attacker's own operation is applied");
        send(mine, FrameEncoder.atomic(mine.alloc(), 2, ORIGIN, 1, 0, 9, 64, Wire.ATOMIC_FETCH, AtomicOp.ADD, 8, 1, 0));
        assertEquals(List.of("ACK", 2L, 102L), reply(mine), "the endpoint's operation 1 is applied, not poisoned");
        assertEquals(3, adds.get());
        assertEquals(2, windows.size(), "one window per (peer, origin)");
    }

    /**
     * One peer cannot make the target hold more dedup state than fenceline.exactly-once.entries-per-peer,
     * neither by growing one window (one frame far ahead of its mark) nor by naming many origin ids;
     * what it is refused is not applied, and another peer is served meanwhile.
     */
    @Test
    void aPeersDedupStateIsBounded() throws Exception {
        transport.close();
        start(4096);
        EmbeddedChannel greedy = authenticated(UUID.randomUUID());
        send(greedy, FrameEncoder.atomic(greedy.alloc(), 1, 1, 5000, 0, 9, 64, Wire.ATOMIC_POST, AtomicOp.ADD, 8, 1, 0));
        List<Object> grown = reply(greedy);
        assertEquals("NACK", grown.get(0), "growing one window to 8192 entries: over the bound");
        assertTrue(((String) grown.get(4)).contains("fenceline.exactly-once.entries-per-peer = 4096"), grown.toString());
        List<EmbeddedChannel> connections = new java.util.ArrayList<>();
        int granted = 0;
        String refusal = null;
        for (long origin = 2; origin < 10 && refusal == null; origin++) {
            EmbeddedChannel ch = authenticated(CLIENT_GREEDY);
            connections.add(ch);
            // Sequence 1023 over a low-water mark of 0: the window grows to 1,024 entries (it starts small).
            send(ch, FrameEncoder.atomic(ch.alloc(), 1, origin, 1023, 0, 9, 64, Wire.ATOMIC_POST, AtomicOp.ADD, 8, 1,
                    0));
            List<Object> r = reply(ch);
            if (r.get(0).equals("ACK")) {
                granted++;
            } else {
                refusal = (String) r.get(4);
            }
        }
        assertEquals(4, granted, "4 windows of 1024 entries fill 4096");
        assertTrue(refusal != null && refusal.contains("fenceline.exactly-once.entries-per-peer"),
                String.valueOf(refusal));
        assertTrue(windows.entries() <= 4096 + 1024, "entries held: " + windows.entries());
        EmbeddedChannel other = authenticated(UUID.randomUUID());
        send(other, FrameEncoder.atomic(other.alloc(), 1, 77, 0, 0, 9, 64, Wire.ATOMIC_POST, AtomicOp.ADD, 8, 1, 0));
        assertEquals(List.of("ACK", 1L, 100L + granted), reply(other), "another peer is served");
        assertEquals(granted + 1, adds.get(), "nothing refused was applied");
    }

    private static final UUID CLIENT_GREEDY = UUID.randomUUID();

    private EmbeddedChannel authenticated() throws Exception {
        return authenticated(CLIENT);
    }

    private EmbeddedChannel authenticated(UUID client) throws Exception {
        EmbeddedChannel ch = new EmbeddedChannel(new TargetHandler(transport));
        byte[] nonce = Handshake.nonce();
        send(ch, FrameEncoder.hello(ch.alloc(), client, me, nonce));
        byte[][] sent = new byte[1][];
        FrameHandler challenge = new FrameHandler() {
            @Override
            public void challenge(int version, byte[] serverNonce) {
                sent[0] = serverNonce;
                ch.writeInbound(strip(FrameEncoder.auth(ch.alloc(), Handshake.fromPassphrase(TcpConfigs.SECRET)
                        .clientProof(version, client, me, nonce, serverNonce))));
            }
        };
        decodeOutbound(ch, challenge);
        assertNotNull(sent[0], "a CHALLENGE first");
        assertEquals(List.of("WELCOME", 256 << 10, Recorder.hex(Handshake.fromPassphrase(TcpConfigs.SECRET)
                .serverProof(Wire.VERSION, client, me, nonce, sent[0]))), reply(ch), "the server proves itself last");
        return ch;
    }

    private static void send(EmbeddedChannel ch, ByteBuf... parts) {
        ch.writeInbound(strip(Unpooled.wrappedBuffer(parts)));
    }

    /** The handler sees frames after the length field decoder: strip the prefix. */
    private static ByteBuf strip(ByteBuf framed) {
        ByteBuf copy = Unpooled.directBuffer(framed.readableBytes() - Wire.LENGTH_FIELD);
        framed.skipBytes(Wire.LENGTH_FIELD);
        copy.writeBytes(framed);
        framed.release();
        return copy;
    }

    private static List<Object> reply(EmbeddedChannel ch) throws MalformedFrameException {
        Recorder r = new Recorder();
        decodeOutbound(ch, r);
        return r.single();
    }

    /** Reads one whole reply (a frame may be written as several buffers) and decodes it. */
    private static void decodeOutbound(EmbeddedChannel ch, FrameHandler h) throws MalformedFrameException {
        ByteBuf first = ch.readOutbound();
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        while (first == null && System.nanoTime() < deadline) {
            // An active message's handler runs on the transport's handler threads; its answer is
            // written by a task it hands back to the channel's (embedded) event loop.
            Thread.onSpinWait();
            ch.runPendingTasks();
            first = ch.readOutbound();
        }
        assertTrue(first != null, "expected a reply");
        int length = first.getInt(first.readerIndex());
        ByteBuf whole = Unpooled.buffer();
        whole.writeBytes(first);
        first.release();
        while (whole.readableBytes() < length + Wire.LENGTH_FIELD) {
            ByteBuf more = ch.readOutbound();
            whole.writeBytes(more);
            more.release();
        }
        try {
            FrameDecoder.decode(whole.skipBytes(Wire.LENGTH_FIELD), h, 1 << 20);
        } finally {
            whole.release();
        }
    }
}
