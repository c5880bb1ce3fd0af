package dev.fenceline.transport.ucx;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.typesafe.config.ConfigFactory;
import dev.fenceline.Access;
import dev.fenceline.AtomicOp;
import dev.fenceline.Endpoint;
import dev.fenceline.Fenceline;
import dev.fenceline.MemoryRegion;
import dev.fenceline.RemoteAccessException;
import dev.fenceline.RemoteKey;
import dev.fenceline.Worker;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * The fast path by grant over UCT's shared memory: once the agent has unpacked a key, the calling
 * thread stores, loads and runs atomics through the key's pointer itself, checked against the owner's
 * key table; a key whose packed UCT key was swapped for another region's
 * (which would map another segment of the owner) never reaches that region; a key claiming more
 * than its owner registered is never mapped; and neither is one whose owner claims more than the
 * segment UCT mapped for it.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class UcxFastPathTest {
    @BeforeAll
    static void ucx() {
        UcxAssumptions.ucxAvailable();
    }

    private Fenceline f;
    private Worker a;
    private Worker b;

    @BeforeEach
    void workers() throws Exception {
        f = Fenceline.create(ConfigFactory.parseString(
                "fenceline.transports = [ucx]\nfenceline.transport.ucx.tls = [posix]"));
        a = await(f.newWorker("a"));
        b = await(f.newWorker("b"));
    }

    @AfterEach
    void close() {
        if (f != null) {
            f.close();
        }
    }

    private static <T> T await(java.util.concurrent.CompletionStage<T> s) throws Exception {
        return s.toCompletableFuture().get(20, TimeUnit.SECONDS);
    }

    @Test
    void operationsGoOnTheCallingThreadOnceTheKeyIsMapped() throws Exception {
        MemoryRegion r = b.allocate(1 << 16);
        RemoteKey k = a.unpackRemoteKey(r.remoteKey().toBytes());
        Endpoint ep = await(a.connect(b.address()));
        await(ep.put(ByteBuffer.wrap(new byte[8]), r.address(), k)); // the agent unpacks and maps the key
        await(ep.flush());
        long before = a.statistics().direct();
        for (int i = 0; i < 1000; i++) {
            ByteBuffer v = ByteBuffer.allocate(8).order(ByteOrder.nativeOrder()).putLong(0, i);
            await(ep.put(v, r.address() + 8L * i, k));
        }
        for (int i = 0; i < 100; i++) {
            await(ep.atomicFetch64(AtomicOp.ADD, r.address() + 8192, k, 1));
        }
        ByteBuffer back = ByteBuffer.allocate(8).order(ByteOrder.nativeOrder());
        await(ep.get(back, r.address() + 8 * 999, k));
        long direct = a.statistics().direct() - before;
        assertTrue(direct >= 1000, "went directly: " + direct + " of 1,101 (" + a.statistics() + ")");
        assertEquals(999, back.getLong(0));
        ByteBuffer m = r.buffer().order(ByteOrder.nativeOrder());
        assertEquals(500, m.getLong(8 * 500));
        assertEquals(100, m.getLong(8192));
        // The table decides on the fast path too: what the region permits, and its bounds.
        Throwable t = assertThrows(ExecutionException.class, () -> await(ep.put(ByteBuffer.allocate(16),
                r.address() + (1 << 16) - 8, k))).getCause();
        assertEquals(RemoteAccessException.Reason.OUT_OF_BOUNDS, assertInstanceOf(RemoteAccessException.class, t)
                .reason());
    }

    /**
     * Large puts and gets on the calling thread, by the native copy from its threshold on and by the
     * JVM's below it and when it is off: each lands whole at any offset, from and into a buffer's
     * position, and writes nothing beside its range.
     */
    @Test
    void largeAccessesThroughTheMappingMoveTheirRangeWhateverCopiesThem() throws Exception {
        for (String copy : new String[] {"auto", "off"}) {
            Fenceline g = Fenceline.create(ConfigFactory.parseString("fenceline.transports = [ucx]\n"
                    + "fenceline.transport.ucx.tls = [posix]\nfenceline.transport.ucx.native-copy = " + copy));
            try {
                Worker x = await(g.newWorker("x"));
                Worker y = await(g.newWorker("y"));
                int size = 1 << 21;
                MemoryRegion r = y.allocate(size);
                RemoteKey k = x.unpackRemoteKey(r.remoteKey().toBytes());
                MemoryRegion scratch = y.allocate(4096);
                RemoteKey sk = x.unpackRemoteKey(scratch.remoteKey().toBytes());
                Endpoint ep = await(x.connect(y.address()));
                assertEquals(copy.equals("auto") ? 256 << 10 : Integer.MAX_VALUE,
                        UcxLane.byId(ep.lanes().get(0).connectionId()).nativeCopyFrom(), copy);
                await(ep.get(ByteBuffer.allocate(8), r.address(), k)); // the agent maps the key
                int seed = 1;
                for (int n : new int[] {(256 << 10) - 1, 256 << 10, (1 << 20) + 3}) {
                    for (int at : new int[] {0, 5, size - n}) {
                        seed++;
                        ByteBuffer src = ByteBuffer.allocateDirect(n + 9);
                        for (int i = 0; i < src.capacity(); i++) {
                            src.put(i, (byte) (i * seed + 11));
                        }
                        src.position(9);
                        r.buffer().put(0, new byte[size]);
                        long before = untilDirect(x, ep, scratch, sk);
                        await(ep.put(src, r.address() + at, k));
                        assertEquals(9, src.position(), "the source's position moved");
                        ByteBuffer dst = ByteBuffer.allocateDirect(n + 4);
                        dst.position(4);
                        await(ep.get(dst, r.address() + at, k));
                        String what = copy + ": " + n + " bytes at " + at;
                        assertTrue(x.statistics().direct() >= before + 2, what + " did not go directly: "
                                + x.statistics());
                        ByteBuffer m = r.buffer();
                        for (int i = 0; i < size; i++) {
                            byte want = i >= at && i < at + n ? src.get(9 + i - at) : 0;
                            if (m.get(i) != want) {
                                assertEquals(want, m.get(i), what + ": byte " + i + " of the region");
                            }
                        }
                        for (int i = 0; i < dst.capacity(); i++) {
                            byte want = i < 4 ? 0 : src.get(9 + i - 4);
                            if (dst.get(i) != want) {
                                assertEquals(want, dst.get(i), what + ": byte " + i + " read back");
                            }
                        }
                    }
                }
            } finally {
                g.close();
            }
        }
    }

    /**
     * Puts 8 bytes into {@code scratch} until one goes directly: the endpoint's grant is back (after a
     * flush or a first access it may come a little later) and nothing of the lane is outstanding.
     *
     * @return the worker's count of direct operations then
     */
    private static long untilDirect(Worker x, Endpoint ep, MemoryRegion scratch, RemoteKey key) throws Exception {
        for (int i = 0; i < 10_000; i++) {
            long d = x.statistics().direct();
            await(ep.put(ByteBuffer.allocate(8), scratch.address(), key));
            if (x.statistics().direct() > d) {
                return d + 1;
            }
        }
        throw new AssertionError("no put went directly in 10,000: " + x.statistics());
    }

    @Test
    void onlyLargeAccessesOfDirectBuffersTakeTheNativeCopy() {
        int from = 256 << 10;
        assertTrue(UcxMappedAccess.copiesNatively(from, ByteBuffer.allocateDirect(from), from));
        assertFalse(UcxMappedAccess.copiesNatively(from - 1, ByteBuffer.allocateDirect(from), from));
        assertFalse(UcxMappedAccess.copiesNatively(from, ByteBuffer.allocate(from), from), "a heap buffer has no address");
        assertFalse(UcxMappedAccess.copiesNatively(1 << 30, ByteBuffer.allocateDirect(8), Integer.MAX_VALUE), "off");
    }

    /**
     * One key unpacked from its bytes again and again (a service that receives it with each
     * request): every copy goes directly once mapped, past the number of distinct keys the agent
     * keeps, since the copies are one key to it (one entry, one UCT key, one mapping).
     */
    @Test
    void copiesOfOneKeyShareItsMapping() throws Exception {
        MemoryRegion r = b.allocate(1 << 16);
        byte[] bytes = r.remoteKey().toBytes();
        Endpoint ep = await(a.connect(b.address()));
        int copies = 5000; // more than the 4,096 keys the agent keeps
        long before = a.statistics().direct();
        for (int i = 0; i < copies; i++) {
            RemoteKey k = a.unpackRemoteKey(bytes);
            ByteBuffer v = ByteBuffer.allocate(8).order(ByteOrder.nativeOrder()).putLong(0, i);
            await(ep.put(v.duplicate(), r.address(), k)); // the agent's: it publishes the mapping to this copy
            await(ep.put(v.duplicate(), r.address() + 8, k));
        }
        long direct = a.statistics().direct() - before;
        assertTrue(direct >= copies, "went directly: " + direct + " of " + 2 * copies + " (" + a.statistics() + ")");
        assertEquals(copies - 1, r.buffer().order(ByteOrder.nativeOrder()).getLong(8));
    }

    /**
     * My region's id, slot and range with the victim's UCT key, which maps the victim's segment: my
     * range does not lie in that mapping, so the iface never uses the key and the target applies the
     * put to the region the key's id names (mine, as my own key would); had my range landed in
     * some mapping of the same file here, the owner's table would refuse the key by its digest.
     * Either way nothing reaches the victim.
     */
    @Test
    void aKeyWhoseUctKeyWasSwappedForAnotherRegionsNeverReachesThatRegion() throws Exception {
        MemoryRegion victim = b.allocate(1 << 16);
        MemoryRegion mine = b.allocate(1 << 16);
        RemoteKey vk = a.unpackRemoteKey(victim.remoteKey().toBytes());
        RemoteKey mk = a.unpackRemoteKey(mine.remoteKey().toBytes());
        UcxKeyPart theirs = UcxKeyPart.decode(vk.part(UcxTransportProvider.NAME));
        UcxKeyPart my = UcxKeyPart.decode(mk.part(UcxTransportProvider.NAME));
        RemoteKey forged = forged(mk, mk.length(), new UcxKeyPart(my.slot(), theirs.rkeys()).encode());
        Endpoint ep = await(a.connect(b.address()));
        byte[] sevens = {7, 7, 7, 7, 7, 7, 7, 7};
        boolean applied;
        try {
            await(ep.put(ByteBuffer.wrap(sevens), mk.baseAddress(), forged));
            applied = true;
        } catch (ExecutionException e) {
            assertEquals(RemoteAccessException.Reason.UNKNOWN_KEY, assertInstanceOf(RemoteAccessException.class,
                    e.getCause()).reason(), e.getCause().getMessage());
            applied = false;
        }
        assertFalse(forged.transportCache() instanceof UcxMapping, "the forged key was mapped");
        for (int i = 0; i < (1 << 16); i++) {
            assertEquals(0, victim.buffer().get(i), "byte " + i + " of the other region was written");
            assertEquals(applied && i < 8 ? 7 : 0, mine.buffer().get(i), "byte " + i + " of the key's region");
        }
    }

    @Test
    void aKeyClaimingMoreThanItsRegionIsNeverMappedAndItsExcessIsRefused() throws Exception {
        MemoryRegion r = b.allocate(1 << 16);
        MemoryRegion next = b.allocate(1 << 16);
        RemoteKey k = a.unpackRemoteKey(r.remoteKey().toBytes());
        // The region's own id, slot and UCT keys, with twice its length.
        RemoteKey longer = forged(k, 2L * k.length(), k.part(UcxTransportProvider.NAME));
        Endpoint ep = await(a.connect(b.address()));
        long before = a.statistics().direct();
        for (int i = 0; i < 100; i++) { // within the registration: applied, by the progress agent
            await(ep.put(ByteBuffer.allocate(8).order(ByteOrder.nativeOrder()).putLong(0, i + 1),
                    r.address() + 8L * i, longer));
        }
        assertEquals(before, a.statistics().direct(), "a key its owner's table does not cover was mapped");
        assertEquals(100, r.buffer().order(ByteOrder.nativeOrder()).getLong(8 * 99));
        long end = r.address() + (1 << 16);
        for (long at : new long[] {end - 4, end, end + (1 << 16) - 8}) {
            Throwable t = assertThrows(ExecutionException.class, () -> await(ep.put(
                    ByteBuffer.wrap(new byte[] {7, 7, 7, 7, 7, 7, 7, 7}), at, longer))).getCause();
            assertEquals(RemoteAccessException.Reason.OUT_OF_BOUNDS, assertInstanceOf(RemoteAccessException.class,
                    t).reason(), t.getMessage());
        }
        for (int i = 0; i < (1 << 16); i++) {
            assertEquals(0, next.buffer().get(i), "byte " + i + " of another region of the owner was written");
        }
        await(ep.put(ByteBuffer.allocate(8), r.address(), k)); // the true key still goes directly
        await(ep.flush());
        for (int i = 0; i < 100; i++) { // the first may still find the actor's grant not yet given again
            await(ep.put(ByteBuffer.allocate(8), r.address(), k));
        }
        assertTrue(a.statistics().direct() > before, "the true key never went directly: " + a.statistics());
        // The grant was there, and still the longer key has no mapping: its accesses stay with the agent.
        assertFalse(longer.transportCache() instanceof UcxMapping, "the longer key was mapped");
        long direct = a.statistics().direct();
        await(ep.put(ByteBuffer.allocate(8), r.address(), longer));
        assertEquals(direct, a.statistics().direct(), "the longer key went directly");
    }

    /**
     * An owner that claims, in its own key table, a region longer than the segment UCT mapped for it
     * (its key saying the same): neither the calling thread nor the iface reaches past the mapping,
     * where this process's own memory lies; the target applies what lies inside and refuses the rest.
     */
    @Test
    void aRegionItsOwnerClaimsLongerThanItsSegmentIsNeverReachedPastIt() throws Exception {
        MemoryRegion r = b.allocate(1 << 16);
        RemoteKey k = a.unpackRemoteKey(r.remoteKey().toBytes());
        Endpoint ep = await(a.connect(b.address()));
        await(ep.put(ByteBuffer.allocate(8), r.address(), k)); // a maps b's key table
        await(ep.flush());
        UcxLane lane = UcxLane.byId(ep.lanes().get(0).connectionId());
        assertTrue(lane != null && lane.channel.peer.table != null, "a maps b's key table over posix");
        int slot = UcxKeyPart.decode(k.part(UcxTransportProvider.NAME)).slot();
        org.agrona.concurrent.UnsafeBuffer registered = lane.channel.peer.table.slotView(slot);
        long length = registered.getLong(16);
        long claimed = 1L << 30;
        registered.putLong(16, claimed); // b's table, as a hostile owner would write it
        try {
            RemoteKey longer = forged(k, claimed, k.part(UcxTransportProvider.NAME));
            long before = a.statistics().direct();
            await(ep.put(ByteBuffer.allocate(8).order(ByteOrder.nativeOrder()).putLong(0, 42), r.address() + 8,
                    longer));
            assertFalse(longer.transportCache() instanceof UcxMapping, "a key past its segment was mapped");
            assertEquals(42, r.buffer().order(ByteOrder.nativeOrder()).getLong(8), "applied by the target");
            for (long past : new long[] {1 << 16, 1 << 20, claimed - 8}) {
                Throwable t = assertThrows(ExecutionException.class, () -> await(ep.put(
                        ByteBuffer.wrap(new byte[] {7, 7, 7, 7, 7, 7, 7, 7}), r.address() + past, longer))).getCause();
                assertEquals(RemoteAccessException.Reason.OUT_OF_BOUNDS, assertInstanceOf(RemoteAccessException.class,
                        t).reason(), t.getMessage());
            }
            assertEquals(before, a.statistics().direct(), "went directly");
        } finally {
            registered.putLong(16, length);
        }
    }

    /**
     * A peer on this host whose key table could not be mapped here (the mapping check refused it):
     * shared memory's UCT key names a segment, not a permission, so without the table to check
     * against, no access goes through it; the target applies each one and refuses what a forged key
     * claims and a closed region.
     */
    @Test
    void withoutThePeersKeyTableSharedMemoryIsNeverReachedDirectly() throws Exception {
        Endpoint ep = await(a.connect(b.address()));
        UcxLane lane = UcxLane.byId(ep.lanes().get(0).connectionId());
        assertTrue(lane != null && lane.channel.peer.table != null, "a maps b's key table over posix");
        lane.channel.peer.table = null; // as if it had not been mapped; tableKey stays, released on close
        MemoryRegion readOnly = b.allocate(1 << 16, java.util.EnumSet.of(Access.READ));
        MemoryRegion closed = b.allocate(4096);
        RemoteKey ro = a.unpackRemoteKey(readOnly.remoteKey().toBytes());
        RemoteKey ck = a.unpackRemoteKey(closed.remoteKey().toBytes());
        RemoteKey everything = forged(ro, ro.length(), ro.part(UcxTransportProvider.NAME));
        long before = a.statistics().direct();
        await(ep.put(ByteBuffer.allocate(8), closed.address(), ck));
        closed.close();
        for (int round = 0; round < 3; round++) {
            Throwable t = assertThrows(ExecutionException.class, () -> await(ep.put(
                    ByteBuffer.wrap(new byte[] {7, 7, 7, 7, 7, 7, 7, 7}), readOnly.address() + 64, everything)))
                    .getCause();
            assertEquals(RemoteAccessException.Reason.ACCESS_DENIED, assertInstanceOf(RemoteAccessException.class,
                    t).reason(), t.getMessage());
            t = assertThrows(ExecutionException.class, () -> await(ep.atomicFetch64(AtomicOp.ADD,
                    readOnly.address() + 128, everything, 1))).getCause();
            assertEquals(RemoteAccessException.Reason.ACCESS_DENIED, assertInstanceOf(RemoteAccessException.class,
                    t).reason(), t.getMessage());
            t = assertThrows(ExecutionException.class, () -> await(ep.put(ByteBuffer.allocate(8), closed.address(),
                    ck))).getCause();
            assertEquals(RemoteAccessException.Reason.REGION_CLOSED, assertInstanceOf(RemoteAccessException.class,
                    t).reason(), t.getMessage());
        }
        for (int i = 0; i < (1 << 16); i++) {
            assertEquals(0, readOnly.buffer().get(i), "byte " + i + " of the read-only region was written");
        }
        assertEquals(before, a.statistics().direct(), "went directly");
        assertFalse(everything.transportCache() instanceof UcxMapping, "the forged key was mapped");
    }

    /** @return the key with another length and ucx part, its id, owner, base and other parts kept */
    private static RemoteKey forged(RemoteKey k, long length, byte[] ucxPart) {
        Map<String, byte[]> parts = new LinkedHashMap<>();
        for (String n : k.partNames()) {
            parts.put(n, k.part(n));
        }
        parts.put(UcxTransportProvider.NAME, ucxPart);
        return new RemoteKey(k.ownerId(), k.keyId(), k.baseAddress(), length, Access.all(), parts);
    }
}
