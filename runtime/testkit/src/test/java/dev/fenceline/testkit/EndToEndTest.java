package dev.fenceline.testkit;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.fenceline.ActiveMessageException;
import dev.fenceline.AtomicOp;
import dev.fenceline.Endpoint;
import dev.fenceline.EndpointClosedException;
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
import org.junit.jupiter.api.Timeout;

/** Tier 3: two workers in one runtime over the default two-lane sim transport. */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class EndToEndTest {
    private static Fenceline fenceline;
    private static Worker a;
    private static Worker b;
    private static Endpoint ep;
    private static MemoryRegion target;
    private static RemoteKey key;

    @BeforeAll
    static void start() throws Exception {
        fenceline = Fenceline.create();
        a = await(fenceline.newWorker("a"));
        b = await(fenceline.newWorker("b"));
        target = b.allocate(4 << 20);
        key = a.unpackRemoteKey(target.remoteKey().toBytes());
        ep = await(a.connect(b.address()));
    }

    @AfterAll
    static void stop() {
        if (fenceline != null) {
            fenceline.close();
        }
    }

    static <T> T await(CompletionStage<T> s) throws Exception {
        return s.toCompletableFuture().get(30, TimeUnit.SECONDS);
    }

    static Throwable failure(CompletionStage<?> s) {
        ExecutionException e = assertThrows(ExecutionException.class,
                () -> s.toCompletableFuture().get(30, TimeUnit.SECONDS));
        return e.getCause();
    }

    @Test
    void endpointHasTheConfiguredLanes() {
        assertEquals(2, ep.lanes().size());
        assertTrue(ep.lanes().stream().allMatch(l -> l.live() && l.transport().equals("sim")));
    }

    @Test
    void putThenGetRoundTripsEverySize() throws Exception {
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

    @Test
    void atomicsReturnOldValuesAndApply() throws Exception {
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

    @Test
    void activeMessagesReachTheirHandler() throws Exception {
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

    @Test
    void badInputGetsTypedErrorsAndNothingIsWritten() throws Exception {
        long addr = target.address() + 100_000;
        byte[] before = new byte[64];
        target.buffer().position(100_000).get(before);

        RemoteKey forged = new RemoteKey(key.ownerId(), key.keyId() ^ 1, key.baseAddress(), key.length(), new byte[0]);
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
                new byte[0]);
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

    @Test
    void closedRegionIsRefusedAtTheTarget() throws Exception {
        MemoryRegion r = b.allocate(4096);
        RemoteKey k = r.remoteKey();
        await(ep.put(ByteBuffer.allocate(8), r.address(), k));
        r.close();
        Throwable t = failure(ep.put(ByteBuffer.allocate(8), r.address(), k));
        assertEquals(Reason.REGION_CLOSED, ((RemoteAccessException) t).reason());
    }

    @Test
    void flushWaitsForEverythingIssuedBefore() throws Exception {
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

    @Test
    void fencedOverwritesLandInOrderAcrossLanes() throws Exception {
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
        assertTrue(a.statistics().strongFences() > 0, "the fence had to be strong: two lanes carried the work");
    }

    @Test
    void closedEndpointRefusesNewWork() throws Exception {
        Endpoint e2 = await(a.connect(b.address()));
        CompletionStage<Void> before = e2.put(ByteBuffer.wrap(new byte[] {1}), target.address() + 300_000, key);
        await(e2.close());
        await(before); // issued before close: completed, not lost
        assertInstanceOf(EndpointClosedException.class, failure(e2.put(ByteBuffer.allocate(1), target.address(), key)));
    }
}
