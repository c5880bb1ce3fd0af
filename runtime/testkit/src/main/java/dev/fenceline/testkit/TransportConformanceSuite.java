package dev.fenceline.testkit;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.typesafe.config.Config;
import dev.fenceline.Access;
import dev.fenceline.ActiveMessageException;
import dev.fenceline.AtomicOp;
import dev.fenceline.Endpoint;
import dev.fenceline.EndpointClosedException;
import dev.fenceline.EndpointFailedException;
import dev.fenceline.Fenceline;
import dev.fenceline.MemoryRegion;
import dev.fenceline.RemoteAccessException;
import dev.fenceline.RemoteAccessException.Reason;
import dev.fenceline.RemoteKey;
import dev.fenceline.Worker;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Random;
import java.util.UUID;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.Timeout;

/**
 * The conformance suite every transport passes: put and get from 1 B to 4 MiB, every atomic in 32
 * and 64 bits, active messages, flush, fence across lanes, and every kind of bad input (a typed
 * error, nothing written, the endpoint keeps serving). A backend's test extends it and says how to
 * configure a runtime whose workers talk over that backend.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
@Timeout(value = 120, unit = TimeUnit.SECONDS)
public abstract class TransportConformanceSuite {
    private Fenceline fenceline;
    private Worker a;
    private Worker b;
    private Endpoint ep;
    private MemoryRegion target;
    private RemoteKey key;

    /** For subclasses. */
    protected TransportConformanceSuite() {
    }

    /** @return the configuration of a runtime whose workers use the transport under test */
    protected abstract Config configuration();

    /**
     * Starts two workers, a 4 MiB target region and one endpoint.
     *
     * @throws Exception if the runtime cannot start
     */
    @BeforeAll
    void start() throws Exception {
        fenceline = Fenceline.create(configuration());
        a = await(fenceline.newWorker("a"));
        b = await(fenceline.newWorker("b"));
        target = b.allocate(4 << 20);
        key = a.unpackRemoteKey(target.remoteKey().toBytes());
        ep = await(a.connect(b.address()));
    }

    /** Closes the runtime. */
    @AfterAll
    void stop() {
        if (fenceline != null) {
            fenceline.close();
        }
    }

    private static <T> T await(CompletionStage<T> s) throws Exception {
        return s.toCompletableFuture().get(30, TimeUnit.SECONDS);
    }

    private static Throwable failure(CompletionStage<?> s) {
        ExecutionException e = assertThrows(ExecutionException.class,
                () -> s.toCompletableFuture().get(30, TimeUnit.SECONDS));
        return e.getCause();
    }

    /** Every lane of a new endpoint is live and names its transport. */
    @Test
    protected void everyLaneIsLiveAndNamesItsTransport() {
        assertTrue(!ep.lanes().isEmpty());
        assertTrue(ep.lanes().stream().allMatch(l -> l.live() && fenceline.transports().contains(l.transport())),
                ep.lanes().toString());
    }

    /**
     * A put then a get returns the bytes, at every size up to fragmented ones.
     *
     * @throws Exception if the runtime fails the test
     */
    @Test
    protected void putThenGetRoundTripsEverySize() throws Exception {
        Random rnd = new Random(42);
        for (int size : new int[] {1, 7, 256, 257, 4096, 16384, 65536, 300_000, 1 << 20, 4 << 20}) {
            byte[] data = new byte[size];
            rnd.nextBytes(data);
            ByteBuffer src = ByteBuffer.allocateDirect(size).put(data).flip();
            await(ep.put(src, target.address(), key));
            ByteBuffer dst = ByteBuffer.allocateDirect(size);
            await(ep.get(dst, target.address(), key));
            byte[] back = new byte[size];
            dst.get(back);
            assertArrayEquals(data, back, "size " + size);
            byte[] atTarget = new byte[size];
            target.buffer().get(atTarget);
            assertArrayEquals(data, atTarget, "target memory, size " + size);
        }
    }

    /**
     * Atomics return the old value and apply, at both widths.
     *
     * @throws Exception if the runtime fails the test
     */
    @Test
    protected void atomicsReturnOldValuesAndApply() throws Exception {
        long addr = target.address() + 8192;
        await(ep.put(ByteBuffer.allocateDirect(16), addr, key)); // zero both words
        await(ep.atomicPost64(AtomicOp.ADD, addr, key, 5));
        assertEquals(5L, await(ep.atomicFetch64(AtomicOp.ADD, addr, key, 10)));
        assertEquals(15L, await(ep.atomicFetch64(AtomicOp.XOR, addr, key, 0xF0)));
        assertEquals(0xFFL, await(ep.atomicFetch64(AtomicOp.AND, addr, key, 0x0F)));
        assertEquals(0x0FL, await(ep.atomicFetch64(AtomicOp.OR, addr, key, 0x100)));
        assertEquals(0x10FL, await(ep.atomicFetch64(AtomicOp.SWAP, addr, key, 7)));
        assertEquals(7L, await(ep.compareAndSwap64(addr, key, 7, 9)));
        assertEquals(9L, await(ep.compareAndSwap64(addr, key, 7, 11)), "failed CAS returns the current value");
        long addr32 = addr + 8;
        await(ep.atomicPost32(AtomicOp.ADD, addr32, key, -3));
        assertEquals(-3, await(ep.atomicFetch32(AtomicOp.ADD, addr32, key, 3)));
        assertEquals(0, await(ep.compareAndSwap32(addr32, key, 0, 42)));
        assertEquals(42, target.buffer().order(ByteOrder.nativeOrder()).getInt(8192 + 8));
        assertEquals(9L, target.buffer().order(ByteOrder.nativeOrder()).getLong(8192));
    }

    /**
     * Every operation, fetched and posted, in both widths, against a local model of the word.
     *
     * @throws Exception on a failed operation
     */
    @Test
    protected void everyAtomicInBothWidthsMatchesTheModel() throws Exception {
        long addr = target.address() + 12288;
        ByteBuffer mem = target.buffer().order(ByteOrder.nativeOrder());
        Random rnd = new Random(7);
        for (int width : new int[] {4, 8}) {
            long model = 0;
            await(ep.put(ByteBuffer.allocate(8), addr, key));
            for (int round = 0; round < 20; round++) {
                for (AtomicOp op : AtomicOp.values()) {
                    long operand = rnd.nextLong();
                    long expectedOld = model;
                    long old;
                    if (width == 4) {
                        old = await(ep.atomicFetch32(op, addr, key, (int) operand));
                        model = (int) op.apply(model, (int) operand);
                    } else {
                        old = await(ep.atomicFetch64(op, addr, key, operand));
                        model = op.apply(model, operand);
                    }
                    assertEquals(expectedOld, old, op + " width " + width + " returned the old value");
                    if (op.postable()) {
                        long o2 = rnd.nextInt(1 << 20);
                        if (width == 4) {
                            await(ep.atomicPost32(op, addr, key, (int) o2));
                            model = (int) op.apply(model, (int) o2);
                        } else {
                            await(ep.atomicPost64(op, addr, key, o2));
                            model = op.apply(model, o2);
                        }
                    }
                    long inMemory = width == 4 ? mem.getInt(12288) : mem.getLong(12288);
                    assertEquals(model, inMemory, op + " width " + width + " left the model's value");
                }
            }
        }
    }


    /**
     * Active messages reach their handler with header and payload.
     *
     * @throws Exception if the runtime fails the test
     */
    @Test
    protected void activeMessagesReachTheirHandler() throws Exception {
        List<String> got = new CopyOnWriteArrayList<>();
        b.setActiveMessageHandler(7, (h, p) -> got.add(StandardCharsets.UTF_8.decode(h) + ":"
                + StandardCharsets.UTF_8.decode(p)));
        await(ep.sendActiveMessage(7, ByteBuffer.wrap("hdr".getBytes(StandardCharsets.UTF_8)),
                ByteBuffer.wrap("payload".getBytes(StandardCharsets.UTF_8))));
        assertEquals(List.of("hdr:payload"), got);
        Throwable t = failure(ep.sendActiveMessage(8, null, null));
        assertInstanceOf(ActiveMessageException.class, t);
        assertTrue(t.getMessage().contains("id 8"), t.getMessage());
    }

    /**
     * A peer worker refused ({@link Worker#refusePeer}: its cluster member was declared gone): its
     * active messages, on the endpoint it had and on one it makes later, are answered with an
     * {@link EndpointFailedException} and never run; another peer is served, and the refusing
     * worker's own endpoint to the refused one works.
     *
     * @throws Exception if the runtime fails the test
     */
    @Test
    protected void aRefusedPeersActiveMessagesAreNeverRun() throws Exception {
        Worker gone = await(fenceline.newWorker("gone"));
        Worker other = await(fenceline.newWorker("other"));
        try {
            java.util.concurrent.atomic.AtomicInteger runs = new java.util.concurrent.atomic.AtomicInteger();
            b.setActiveMessageHandler(21, (h, p) -> runs.incrementAndGet());
            Endpoint fromGone = await(gone.connect(b.address()));
            await(fromGone.sendActiveMessage(21, ByteBuffer.allocate(8), ByteBuffer.allocate(8)));
            assertEquals(1, runs.get(), "before the refusal");
            b.refusePeer(gone.address().workerId(), "its member was downed");
            for (int i = 0; i < 3; i++) {
                Throwable t = failure(fromGone.sendActiveMessage(21, ByteBuffer.allocate(8), ByteBuffer.allocate(8)));
                assertInstanceOf(EndpointFailedException.class, t, String.valueOf(t));
                assertTrue(t.getMessage().contains("its member was downed"), t.getMessage());
            }
            Endpoint later = await(gone.connect(b.address()));
            assertInstanceOf(EndpointFailedException.class, failure(later.sendActiveMessage(21, ByteBuffer.allocate(8),
                    ByteBuffer.allocate(8))), "an endpoint made after the refusal");
            assertEquals(1, runs.get(), "the refused peer's messages ran");
            Endpoint fromOther = await(other.connect(b.address()));
            await(fromOther.sendActiveMessage(21, ByteBuffer.allocate(8), ByteBuffer.allocate(8)));
            assertEquals(2, runs.get(), "another peer is served");
            java.util.concurrent.atomic.AtomicInteger back = new java.util.concurrent.atomic.AtomicInteger();
            gone.setActiveMessageHandler(22, (h, p) -> back.incrementAndGet());
            await(await(b.connect(gone.address())).sendActiveMessage(22, ByteBuffer.allocate(8), ByteBuffer.allocate(8)));
            assertEquals(1, back.get(), "the refusing worker's own endpoint to it");
        } finally {
            await(gone.close());
            await(other.close());
        }
    }

    /**
     * A handler that throws, an {@link Error} as much as an exception, is a typed
     * {@link ActiveMessageException} at the origin; it ran once, and the lane (and its fast path,
     * where it has one) goes on serving: the next message and the next put complete.
     *
     * @throws Exception if the runtime fails the test
     */
    @Test
    protected void aHandlerThatThrowsIsATypedFailureAndTheLaneLivesOn() throws Exception {
        java.util.concurrent.atomic.AtomicInteger runs = new java.util.concurrent.atomic.AtomicInteger();
        b.setActiveMessageHandler(11, (h, p) -> {
            runs.incrementAndGet();
            throw new AssertionError("the handler's own bug");
        });
        b.setActiveMessageHandler(12, (h, p) -> {
            runs.incrementAndGet();
            throw new IllegalStateException("the handler refuses");
        });
        Throwable error = failure(ep.sendActiveMessage(11, ByteBuffer.allocate(4), ByteBuffer.allocate(4)));
        assertInstanceOf(ActiveMessageException.class, error);
        assertTrue(error.getMessage().contains("id 11") && error.getMessage().contains("the handler's own bug"),
                error.getMessage());
        Throwable refused = failure(ep.sendActiveMessage(12, ByteBuffer.allocate(4), ByteBuffer.allocate(4)));
        assertInstanceOf(ActiveMessageException.class, refused);
        assertTrue(refused.getMessage().contains("the handler refuses"), refused.getMessage());
        await(ep.flush());
        assertEquals(2, runs.get(), "each handler ran once");
        List<String> got = new CopyOnWriteArrayList<>();
        b.setActiveMessageHandler(13, (h, p) -> got.add("fine"));
        await(ep.sendActiveMessage(13, ByteBuffer.allocate(4), ByteBuffer.allocate(4)));
        assertEquals(List.of("fine"), got);
        long before = ep.statistics().fastPath();
        for (int i = 0; i < 64; i++) {
            await(ep.put(ByteBuffer.wrap(new byte[] {(byte) i}), target.address() + 200_000, key));
        }
        assertEquals(63, target.buffer().get(200_000));
        assertTrue(ep.lanes().stream().allMatch(l -> l.live()), "no lane failed: " + ep.lanes());
        if (before > 0) {
            assertTrue(ep.statistics().fastPath() > before, "the fast path still serves: " + ep.statistics());
        }
    }

    /**
     * Bad input gets typed errors, and nothing is written at the target.
     *
     * @throws Exception if the runtime fails the test
     */
    @Test
    protected void badInputGetsTypedErrorsAndNothingIsWritten() throws Exception {
        long addr = target.address() + 100_000;
        byte[] before = new byte[64];
        target.buffer().position(100_000).get(before);

        RemoteKey forged = new RemoteKey(key.ownerId(), key.keyId() ^ 1, key.baseAddress(), key.length(), java.util.Map.of());
        Throwable t = failure(ep.put(ByteBuffer.allocate(8), addr, forged));
        assertEquals(Reason.UNKNOWN_KEY, ((RemoteAccessException) t).reason());

        t = failure(ep.put(ByteBuffer.allocate(64), target.address() + target.length() - 32, key));
        assertEquals(Reason.OUT_OF_BOUNDS, ((RemoteAccessException) t).reason());
        assertTrue(t.getMessage().contains("outside region"), t.getMessage());

        t = failure(ep.atomicFetch64(AtomicOp.ADD, addr + 4, key, 1));
        assertEquals(Reason.MISALIGNED, ((RemoteAccessException) t).reason());

        t = failure(ep.atomicPost64(AtomicOp.SWAP, addr, key, 1));
        assertEquals(Reason.INVALID_OPERATION, ((RemoteAccessException) t).reason());

        RemoteKey otherOwner = new RemoteKey(UUID.randomUUID(), key.keyId(), key.baseAddress(), key.length(),
                java.util.Map.of());
        t = failure(ep.put(ByteBuffer.allocate(8), addr, otherOwner));
        assertEquals(Reason.WRONG_PEER, ((RemoteAccessException) t).reason());

        RemoteAccessException malformed = assertThrows(RemoteAccessException.class,
                () -> a.unpackRemoteKey(new byte[] {1, 2, 3}));
        assertEquals(Reason.MALFORMED_KEY, malformed.reason());

        byte[] after = new byte[64];
        target.buffer().position(100_000).get(after);
        assertArrayEquals(before, after, "nothing written at the target");
        // and the endpoint keeps serving
        await(ep.put(ByteBuffer.wrap(new byte[] {9}), addr, key));
        assertEquals(9, target.buffer().get(100_000));
    }

    /**
     * A region registered for some access only: the origin refuses the rest by the key, and the
     * target refuses it by what was registered when the key is forged to claim every access, for
     * small operations and bulk ones (whichever lane or direct path carries them). Nothing is written.
     *
     * @throws Exception if the runtime fails the test
     */
    @Test
    protected void accessARegionWasNotRegisteredForIsRefusedAtTheOriginAndAtTheTarget() throws Exception {
        int n = 128 << 10;
        MemoryRegion readOnly = b.allocate(n, java.util.EnumSet.of(Access.READ));
        MemoryRegion writeOnly = b.register(ByteBuffer.allocateDirect(n), java.util.EnumSet.of(Access.WRITE));
        try {
            RemoteKey ro = a.unpackRemoteKey(readOnly.remoteKey().toBytes());
            RemoteKey wo = a.unpackRemoteKey(writeOnly.remoteKey().toBytes());
            assertEquals(java.util.Set.of(Access.READ), ro.access());
            denied(ep.put(ByteBuffer.allocate(8), readOnly.address(), ro), "WRITE");
            denied(ep.atomicFetch64(AtomicOp.ADD, readOnly.address(), ro, 1), "ATOMIC");
            denied(ep.compareAndSwap64(readOnly.address(), ro, 0, 1), "ATOMIC");
            denied(ep.get(ByteBuffer.allocate(8), writeOnly.address(), wo), "READ");
            denied(ep.atomicPost64(AtomicOp.ADD, writeOnly.address(), wo, 1), "ATOMIC");

            readOnly.buffer().order(ByteOrder.nativeOrder()).putLong(0, 77);
            ByteBuffer got = ByteBuffer.allocate(8).order(ByteOrder.nativeOrder());
            await(ep.get(got, readOnly.address(), ro));
            assertEquals(77, got.getLong(0), "what the region permits works");
            await(ep.put(ByteBuffer.wrap(new byte[] {5}), writeOnly.address(), wo));
            await(ep.flush());
            assertEquals(5, writeOnly.buffer().get(0));

            RemoteKey forgedRo = everyAccess(ro);
            RemoteKey forgedWo = everyAccess(wo);
            denied(ep.put(ByteBuffer.allocate(8), readOnly.address() + 64, forgedRo), "WRITE");
            denied(ep.put(ByteBuffer.allocateDirect(64 << 10), readOnly.address() + 4096, forgedRo), "WRITE");
            denied(ep.atomicFetch64(AtomicOp.ADD, readOnly.address() + 64, forgedRo, 1), "ATOMIC");
            denied(ep.get(ByteBuffer.allocate(8), writeOnly.address(), forgedWo), "READ");
            denied(ep.get(ByteBuffer.allocateDirect(64 << 10), writeOnly.address(), forgedWo), "READ");
            ByteBuffer m = readOnly.buffer();
            for (int i = 8; i < n; i++) {
                assertEquals(0, m.get(i), "byte " + i + " of the read-only region was written");
            }
            await(ep.put(ByteBuffer.wrap(new byte[] {6}), writeOnly.address() + 1, wo));
            await(ep.flush());
            assertEquals(6, writeOnly.buffer().get(1), "the endpoint keeps serving");
        } finally {
            readOnly.close();
            writeOnly.close();
        }
    }

    /** The key as a peer could forge it: the same region and parts, claiming every access. */
    private static RemoteKey everyAccess(RemoteKey k) {
        java.util.Map<String, byte[]> parts = new java.util.LinkedHashMap<>();
        for (String name : k.partNames()) {
            parts.put(name, k.part(name));
        }
        return new RemoteKey(k.ownerId(), k.keyId(), k.baseAddress(), k.length(), Access.all(), parts);
    }

    private static void denied(CompletionStage<?> s, String access) {
        Throwable t = failure(s);
        RemoteAccessException e = assertInstanceOf(RemoteAccessException.class, t, String.valueOf(t));
        assertEquals(Reason.ACCESS_DENIED, e.reason(), e.getMessage());
        assertTrue(e.getMessage().contains(access), "names the access " + access + ": " + e.getMessage());
    }

    /**
     * A region its owner closed is refused at the target.
     *
     * @throws Exception if the runtime fails the test
     */
    @Test
    protected void closedRegionIsRefusedAtTheTarget() throws Exception {
        MemoryRegion r = b.allocate(4096);
        RemoteKey k = r.remoteKey();
        await(ep.put(ByteBuffer.allocate(8), r.address(), k));
        r.close();
        Throwable t = failure(ep.put(ByteBuffer.allocate(8), r.address(), k));
        assertEquals(Reason.REGION_CLOSED, ((RemoteAccessException) t).reason());
    }

    /**
     * A flush completes only when everything issued before it is visible.
     *
     * @throws Exception if the runtime fails the test
     */
    @Test
    protected void flushWaitsForEverythingIssuedBefore() throws Exception {
        int n = 200;
        long base = target.address() + 200_000;
        for (int i = 0; i < n; i++) {
            ep.put(ByteBuffer.allocate(8).order(ByteOrder.nativeOrder()).putLong(0, i + 1L), base + 8L * i, key);
        }
        await(ep.flush());
        ByteBuffer mem = target.buffer().order(ByteOrder.nativeOrder());
        for (int i = 0; i < n; i++) {
            assertEquals(i + 1L, mem.getLong(200_000 + 8 * i), "word " + i);
        }
        await(a.flush());
        assertNotNull(a.statistics());
        assertTrue(a.statistics().flushes() >= 2);
    }

    /**
     * Overwrites separated by fences land in order, whichever lanes carry them.
     *
     * @throws Exception if the runtime fails the test
     */
    @Test
    protected void fencedOverwritesLandInOrderAcrossLanes() throws Exception {
        // A large put goes on the bulk lane, a one-byte put on the short lane: only the fence orders them.
        int size = 1 << 20;
        long base = target.address() + (2 << 20);
        ByteBuffer big = ByteBuffer.allocateDirect(size);
        for (int i = 0; i < size; i++) {
            big.put(i, (byte) 0x7F);
        }
        for (int i = 0; i < 20; i++) {
            ep.put(big.duplicate(), base, key);
            ep.fence();
            ep.put(ByteBuffer.wrap(new byte[] {(byte) i}), base, key);
            ep.put(ByteBuffer.wrap(new byte[] {(byte) i}), base + size - 1, key);
            await(ep.flush());
            assertEquals((byte) i, target.buffer().get(2 << 20), "first byte, round " + i);
            assertEquals((byte) i, target.buffer().get((2 << 20) + size - 1), "last byte, round " + i);
        }
        if (ep.lanes().size() > 1) {
            // Either the fence engine ordered them, or the calling thread wrote each one directly
            // (the fast path), complete and visible before the next was issued.
            var stats = a.statistics();
            assertTrue(stats.strongFences() + stats.weakFences() > 0 || stats.direct() > 0, stats.toString());
        }
    }

    /**
     * A closed endpoint refuses new work with a typed error.
     *
     * @throws Exception if the runtime fails the test
     */
    @Test
    protected void closedEndpointRefusesNewWork() throws Exception {
        Endpoint e2 = await(a.connect(b.address()));
        CompletionStage<Void> before = e2.put(ByteBuffer.wrap(new byte[] {1}), target.address() + 300_000, key);
        await(e2.close());
        await(before); // issued before close: completed, not lost
        assertInstanceOf(EndpointClosedException.class, failure(e2.put(ByteBuffer.allocate(1), target.address(), key)));
    }
}
