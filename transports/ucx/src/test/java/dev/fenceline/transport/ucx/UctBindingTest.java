package dev.fenceline.transport.ucx;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.fenceline.Access;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.EnumSet;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.agrona.BufferUtil;
import org.agrona.concurrent.UnsafeBuffer;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * The native binding against the UCT of this host, two ifaces of one worker talking to each other:
 * every operation kind reaches the target's memory with the value it should, and completions and
 * active messages come back as events ({@link UctPeerInputTest}: what a peer sends, and errors).
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class UctBindingTest {
    private static final EnumSet<Access> ALL = EnumSet.allOf(Access.class);

    @BeforeEach
    void ucx() {
        UcxAssumptions.ucxAvailable();
    }

    /** @return the fetched value, whether it came at once or in a completion */
    private static long fetched(UctWorker w, RecordedEvents ev, UctEndpoint ep, int status, long token) {
        if (status == UctStatus.OK) {
            return ep.result();
        }
        assertEquals(UctStatus.IN_PROGRESS, status, UctStatus.describe(status));
        long[] c = ev.await(w, token);
        assertEquals(UctStatus.OK, (int) c[0], UctStatus.describe((int) c[0]));
        return c[1];
    }

    private static void flushed(UctWorker w, RecordedEvents ev, UctEndpoint ep, long token) {
        int s = ep.flush(token);
        ev.succeeded(w, s, token);
    }

    @Test
    void theHostsResourcesAreListedWithTheLoadedVersion() {
        List<UctResource> all = UcxNative.resources();
        assertTrue(all.stream().anyMatch(r -> r.transport().equals("posix") && r.deviceType().equals("shm")), all::toString);
        assertTrue(all.stream().anyMatch(r -> r.transport().equals("tcp") && r.device().equals("lo")), all::toString);
        assertTrue(UcxNative.version().matches("\\d+\\.\\d+\\.\\d+"), UcxNative.version());
    }

    @ParameterizedTest
    @ValueSource(strings = {"posix", "sysv"})
    void everyOperationReachesSharedMemory(String transport) {
        UctResource r = UcxAssumptions.resource(transport, "memory");
        try (UctWorker w = UctWorker.create()) {
            UctIface a = w.open(r, Map.of());
            UctIface b = w.open(r, Map.of());
            UctIfaceAttributes attrs = a.attributes();
            assertTrue(attrs.has(UctIfaceAttributes.PUT_SHORT) && attrs.has(UctIfaceAttributes.CONNECT_TO_IFACE),
                    attrs::toString);
            assertTrue(attrs.atomics(8).contains(dev.fenceline.AtomicOp.ADD), attrs::toString);
            UctMemory target = b.allocate(1 << 20, ALL);
            UnsafeBuffer t = new UnsafeBuffer(target.address(), 1 << 20);
            t.setMemory(0, 1 << 20, (byte) 0);
            UctRemoteKey key = a.unpack(target.pack());
            assertTrue(a.reachable(b.address()));
            UctEndpoint ep = a.connect(b.address());
            long base = target.address();
            long rkey = key.value();
            ByteBuffer local = ByteBuffer.allocateDirect(8192).order(ByteOrder.nativeOrder());
            long src = BufferUtil.address(local);
            RecordedEvents ev = new RecordedEvents();

            local.putLong(0, 0x1122334455667788L);
            assertEquals(UctStatus.OK, ep.putShort(src, 8, base, rkey));
            assertEquals(0x1122334455667788L, t.getLong(0));

            for (int i = 0; i < 4096; i++) {
                local.put(i, (byte) (i * 7));
            }
            assertEquals(UctStatus.OK, ep.putBcopy(src, 4096, base + 4096, rkey));
            for (int i = 0; i < 4096; i++) {
                assertEquals((byte) (i * 7), t.getByte(4096 + i), "byte " + i);
            }

            ByteBuffer into = ByteBuffer.allocateDirect(4096);
            int s = ep.getBcopy(BufferUtil.address(into), 4096, base + 4096, rkey, 41);
            ev.succeeded(w, s, 41);
            for (int i = 0; i < 4096; i++) {
                assertEquals((byte) (i * 7), into.get(i), "got byte " + i);
            }

            t.putLong(64, 40);
            assertEquals(UctStatus.OK, ep.atomicPost(UctEndpoint.ADD, 8, 2, base + 64, rkey));
            assertEquals(42, t.getLong(64));
            assertEquals(42, fetched(w, ev, ep, ep.atomicFetch(UctEndpoint.ADD, 8, 100, base + 64, rkey, 42), 42));
            assertEquals(142, t.getLong(64));
            assertEquals(142, fetched(w, ev, ep, ep.compareAndSwap(8, 142, 7, base + 64, rkey, 43), 43));
            assertEquals(7, t.getLong(64));
            assertEquals(7, fetched(w, ev, ep, ep.compareAndSwap(8, 142, 9, base + 64, rkey, 44), 44),
                    "a compare that fails returns the old value");
            assertEquals(7, t.getLong(64));
            t.putInt(128, 5);
            assertEquals(5, fetched(w, ev, ep, ep.atomicFetch(UctEndpoint.ADD, 4, 3, base + 128, rkey, 45), 45));
            assertEquals(8, t.getInt(128));
            assertEquals(UctStatus.UNSUPPORTED, ep.atomicPost(UctEndpoint.SWAP, 8, 1, base + 64, rkey),
                    "UCT has no posted swap; refused rather than left to UCT's assertion");
            assertEquals(UctStatus.EXCEEDS_LIMIT, ep.activeMessageShort(3, 0, src, (int) attrs.amMaxShort()),
                    "the 8-byte header counts against the short limit");
            assertEquals(7, t.getLong(64), "nothing refused was applied");

            byte[] text = "hello".getBytes(java.nio.charset.StandardCharsets.ISO_8859_1);
            local.put(0, text);
            assertEquals(UctStatus.OK, ep.activeMessageShort(3, 0x4142434445464748L, src, text.length));
            assertEquals(UctStatus.OK, ep.activeMessageCopy(4, src, text.length));
            // Two pieces, one message: a request's header and a payload kept elsewhere.
            byte[] tail = " world".getBytes(java.nio.charset.StandardCharsets.ISO_8859_1);
            local.put(64, tail);
            assertEquals(UctStatus.OK, ep.activeMessageCopy(5, src, text.length, src + 64, tail.length));
            assertEquals(UctStatus.EXCEEDS_LIMIT, ep.activeMessageCopy(5, src, text.length, src + 64,
                    attrs.amMaxBcopy() - text.length + 1), "both pieces count against the copy limit");
            flushed(w, ev, ep, 46);
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
            while (ev.messages.size() < 3 && System.nanoTime() < deadline) {
                w.progress();
                w.drain(ev);
            }
            assertEquals(List.of("3:HGFEDCBAhello", "4:hello", "5:hello world"), ev.messages,
                    "the short message's header comes first; the pieces in order");
            assertEquals(UctStatus.OK, ep.fence());
        }
    }

    /**
     * Every atomic an iface keeps gives the model's answer in both widths; one it claims but got
     * wrong when tried at open (UCX 1.13.1's shared memory stores the wrong value for fetching AND,
     * OR and XOR) is refused, so the transport does it in software.
     */
    @ParameterizedTest
    @ValueSource(strings = {"posix", "sysv"})
    void keptAtomicsAreRightAndRefutedOnesAreRefused(String transport) {
        try (UctWorker w = UctWorker.create()) {
            UctIface a = w.open(UcxAssumptions.resource(transport, "memory"), Map.of());
            UctIface b = w.open(UcxAssumptions.resource(transport, "memory"), Map.of());
            UctIfaceAttributes attrs = a.attributes();
            assertEquals(1, attrs.atomicVerified(), "shared memory connects to itself, so its atomics were tried");
            System.out.println(transport + ": atomics refuted at open: " + attrs.refutedAtomics());
            UctMemory target = b.allocate(4096, ALL);
            UnsafeBuffer t = new UnsafeBuffer(target.address(), 4096);
            UctEndpoint ep = a.connect(b.address());
            long rkey = a.unpack(target.pack()).value();
            RecordedEvents ev = new RecordedEvents();
            long token = 100;
            int tried = 0;
            for (int width : new int[] {4, 8}) {
                long mask = width == 4 ? 0xffffffffL : -1L;
                for (int op = UctEndpoint.ADD; op <= UctEndpoint.SWAP; op++) {
                    for (boolean fetch : new boolean[] {false, true}) {
                        long kept = fetch ? (width == 4 ? attrs.atomic32Fetch() : attrs.atomic64Fetch())
                                : (width == 4 ? attrs.atomic32Post() : attrs.atomic64Post());
                        long old = 0x1234_5678_0000_0006L & mask;
                        long operand = 0x0f0f_0f0f_0000_0003L & mask;
                        long want = switch (op) {
                            case UctEndpoint.ADD -> (old + operand) & mask;
                            case UctEndpoint.AND -> old & operand;
                            case UctEndpoint.OR -> old | operand;
                            case UctEndpoint.XOR -> old ^ operand;
                            default -> operand;
                        };
                        t.putLong(0, 0);
                        if (width == 4) {
                            t.putInt(0, (int) old);
                        } else {
                            t.putLong(0, old);
                        }
                        int s = fetch ? ep.atomicFetch(op, width, operand, target.address(), rkey, ++token)
                                : ep.atomicPost(op, width, operand, target.address(), rkey);
                        String what = (fetch ? "fetching " : "posted ") + width * 8 + "-bit op " + op;
                        if ((kept & (1L << op)) == 0) {
                            assertEquals(UctStatus.UNSUPPORTED, s, what + " is not kept, so it is refused");
                            assertEquals(old, width == 4 ? t.getInt(0) & mask : t.getLong(0), what + " left memory alone");
                            continue;
                        }
                        tried++;
                        if (fetch) {
                            assertEquals(old, fetched(w, ev, ep, s, token) & mask, what + " fetched the old value");
                        } else {
                            assertEquals(UctStatus.OK, s, what);
                            flushed(w, ev, ep, ++token);
                        }
                        assertEquals(want, width == 4 ? t.getInt(0) & mask : t.getLong(0), what + " stored");
                    }
                }
            }
            assertTrue(tried >= 8, "posted ADD/AND/OR/XOR of both widths at least: " + tried);
        }
    }

    /**
     * The shim's copy, which large accesses through a peer's mapping take: every byte of its range at
     * any alignment, and none beside it.
     */
    @Test
    void theShimsCopyMovesItsRangeAndNothingBeside() {
        Shim shim = UcxNative.shim();
        for (int n : new int[] {0, 1, 63, 4099, (16 << 10) + 5, (1 << 20) + 3}) {
            for (int[] shift : new int[][] {{0, 0}, {3, 0}, {0, 5}, {7, 61}}) {
                ByteBuffer from = ByteBuffer.allocateDirect(n + 64);
                ByteBuffer to = ByteBuffer.allocateDirect(n + 128);
                for (int i = 0; i < from.capacity(); i++) {
                    from.put(i, (byte) (i * 31 + 7));
                }
                int at = 32 + shift[1];
                shim.flu_copy(BufferUtil.address(to) + at, BufferUtil.address(from) + shift[0], n);
                for (int i = 0; i < to.capacity(); i++) {
                    byte want = i >= at && i < at + n ? from.get(i - at + shift[0]) : 0;
                    if (to.get(i) != want) {
                        assertEquals(want, to.get(i), "byte " + i + " after a copy of " + n + " bytes from +" + shift[0]
                                + " to +" + at);
                    }
                }
            }
        }
    }

    @Test
    void aHandlerThatThrowsDoesNotCostTheEventsBehindIt() {
        IllegalStateException first = handlerFailsFirst(new IllegalStateException("the first handler fails"));
        assertEquals("the first handler fails", first.getMessage());
    }

    /**
     * A handler that sends, over UCT's self transport, whose messages arrive inside the send: what
     * arrives meanwhile is reported in the same drain, even when so much arrives that the event
     * buffer grows (and moves) under the handler, whose view of its own message stays readable.
     */
    @Test
    void messagesThatArriveWhileAHandlerSendsAreNotLost() {
        UcxAssumptions.ucxAvailable();
        UctResource self = UcxNative.resources().stream().filter(r -> r.transport().equals("self")).findFirst()
                .orElse(null);
        org.junit.jupiter.api.Assumptions.assumeTrue(self != null, "no UCT self transport here");
        try (UctWorker w = UctWorker.create()) {
            UctIface s = w.open(self, Map.of());
            UctEndpoint ep = s.connect(s.address());
            long at = BufferUtil.address(ByteBuffer.allocateDirect(64));
            int replies = 20_000; // 40 bytes of event each: far past the buffer's first 64 KiB
            assertEquals(UctStatus.OK, ep.activeMessageShort(1, 0x5151515151515151L, at, 0));
            List<Long> seen = new java.util.ArrayList<>();
            long[] firstAfter = new long[1];
            UctEventHandler replying = new UctEventHandler() {
                @Override
                public void completed(long token, int status, long value) {
                }

                @Override
                public void activeMessage(long iface, int id, org.agrona.DirectBuffer data, int offset, int length) {
                    long v = data.getLong(offset);
                    seen.add(v);
                    if (id == 1) {
                        for (int i = 0; i < replies; i++) {
                            assertEquals(UctStatus.OK, ep.activeMessageShort(2, i, at, 0));
                        }
                        firstAfter[0] = data.getLong(offset); // its own message, after the buffer moved
                    }
                }

                @Override
                public void ready(long token) {
                }

                @Override
                public void endpointFailed(long endpoint, int status) {
                }
            };
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
            int drained = 0;
            while (seen.isEmpty()) {
                assertTrue(System.nanoTime() < deadline, "the first message never came");
                w.progress();
                drained += w.drain(replying);
            }
            assertEquals(1 + replies, drained, "every message that came while the handler sent");
            assertEquals(0x5151515151515151L, seen.get(0));
            assertEquals(0x5151515151515151L, firstAfter[0], "the handler's view after the buffer grew");
            for (int i = 0; i < replies; i++) {
                assertEquals(i, seen.get(1 + i), "reply " + i);
            }
        }
    }

    /** An Error too (a handler out of memory): the other peers' events in the batch are still reported. */
    @Test
    void aHandlerThatFailsWithAnErrorDoesNotCostTheEventsBehindIt() {
        OutOfMemoryError first = handlerFailsFirst(new OutOfMemoryError("the first handler ran out"));
        assertEquals("the first handler ran out", first.getMessage());
    }

    /**
     * Three messages gathered, the first one's handler fails with {@code failure}: all three are
     * reported, then the failure is thrown.
     *
     * @return what drain threw
     */
    @SuppressWarnings("unchecked")
    private static <T extends Throwable> T handlerFailsFirst(T failure) {
        try (UctWorker w = UctWorker.create()) {
            UctIface a = w.open(UcxAssumptions.resource("posix", "memory"), Map.of());
            UctIface b = w.open(UcxAssumptions.resource("posix", "memory"), Map.of());
            UctEndpoint ep = a.connect(b.address());
            long at = BufferUtil.address(ByteBuffer.allocateDirect(64));
            for (int i = 0; i < 3; i++) {
                assertEquals(UctStatus.OK, ep.activeMessageShort(3, 0x4141414141414140L + i, at, 0));
            }
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
            List<Long> seen = new java.util.ArrayList<>();
            UctEventHandler throwing = new UctEventHandler() {
                @Override
                public void completed(long token, int status, long value) {
                }

                @Override
                public void activeMessage(long iface, int id, org.agrona.DirectBuffer data, int offset, int length) {
                    seen.add(data.getLong(offset));
                    if (seen.size() == 1) {
                        if (failure instanceof RuntimeException e) {
                            throw e;
                        }
                        throw (Error) failure;
                    }
                }

                @Override
                public void ready(long token) {
                }

                @Override
                public void endpointFailed(long endpoint, int status) {
                }
            };
            // All three gathered first, so that one drain reports them: the first handler's failure
            // must not cost the two behind it in the same batch.
            for (int gathered = 0; gathered < 3;) {
                assertTrue(System.nanoTime() < deadline, "messages gathered: " + gathered);
                gathered += w.progress();
            }
            Throwable first = assertThrows(failure.getClass(), () -> w.drain(throwing));
            assertEquals(List.of(0x4141414141414140L, 0x4141414141414141L, 0x4141414141414142L), seen);
            return (T) first;
        }
    }

    @Test
    void crossMemoryAttachMovesZeroCopyWithRegisteredMemory() {
        UctResource r = UcxAssumptions.resource("cma", "memory");
        try (UctWorker w = UctWorker.create()) {
            UctIface a = w.open(r, Map.of());
            UctIface b = w.open(r, Map.of());
            UctIfaceAttributes attrs = a.attributes();
            assertTrue(attrs.has(UctIfaceAttributes.PUT_ZCOPY) && attrs.has(UctIfaceAttributes.GET_ZCOPY), attrs::toString);
            assertFalse(attrs.has(UctIfaceAttributes.PUT_SHORT), attrs::toString);
            ByteBuffer region = ByteBuffer.allocateDirect(1 << 16);
            UctMemory target = b.register(BufferUtil.address(region), region.capacity(), ALL);
            UctRemoteKey key = a.unpack(target.pack());
            UctEndpoint ep = a.connect(b.address());
            ByteBuffer local = ByteBuffer.allocateDirect(1 << 16);
            for (int i = 0; i < local.capacity(); i++) {
                local.put(i, (byte) (i ^ 0x5a));
            }
            UctMemory localReg = a.register(BufferUtil.address(local), local.capacity(), ALL);
            RecordedEvents ev = new RecordedEvents();
            int s = ep.putZcopy(BufferUtil.address(local), 1 << 16, localReg.memoryHandle(), target.address(),
                    key.value(), 7);
            ev.succeeded(w, s, 7);
            for (int i = 0; i < region.capacity(); i++) {
                assertEquals((byte) (i ^ 0x5a), region.get(i), "byte " + i);
            }
            ByteBuffer back = ByteBuffer.allocateDirect(1 << 16);
            UctMemory backReg = a.register(BufferUtil.address(back), back.capacity(), ALL);
            s = ep.getZcopy(BufferUtil.address(back), 1 << 16, backReg.memoryHandle(), target.address(), key.value(), 8);
            ev.succeeded(w, s, 8);
            assertEquals(region, back);
        }
    }

    @Test
    void tcpEndpointsConnectToEachOtherAndCarryMessagesBothWays() {
        UctResource r = UcxAssumptions.resource("tcp", "lo");
        try (UctWorker w = UctWorker.create()) {
            UctIface a = w.open(r, Map.of());
            UctIface b = w.open(r, Map.of());
            assertTrue(a.attributes().has(UctIfaceAttributes.CONNECT_TO_EP), a.attributes()::toString);
            UctEndpoint ab = a.unconnected();
            UctEndpoint ba = b.unconnected();
            byte[] abAddress = ab.address();
            assertEquals(a.attributes().endpointAddressLength(), abAddress.length);
            ab.connectTo(b.address(), ba.address());
            ba.connectTo(a.address(), abAddress);
            // UCT 1.13's tcp drops what the connecting side sends right behind its connection
            // request when the request and the data reach the peer in one read (seen in about half
            // the runs of this test): the first side repeats itself until the other heard it, then
            // the other answers, as the transport's wireup does.
            RecordedEvents ev = new RecordedEvents();
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
            while (ev.messages.isEmpty()) {
                assertTrue(System.nanoTime() < deadline, "a's messages never reached b");
                send(w, ev, ab, 5, "a to b");
                for (long until = System.nanoTime() + 20_000_000L; System.nanoTime() < until && ev.messages.isEmpty();) {
                    w.progress();
                    w.drain(ev);
                }
            }
            ev.messages.subList(1, ev.messages.size()).clear();
            send(w, ev, ba, 6, "b to a");
            while (ev.messages.size() < 2 && System.nanoTime() < deadline) {
                w.progress();
                w.drain(ev);
            }
            assertEquals(java.util.Set.of("5:a to b", "6:b to a"), java.util.Set.copyOf(ev.messages));
            UctException bad = assertThrows(UctException.class, () -> b.unconnected().connectTo(a.address(),
                    new byte[3]));
            assertTrue(bad.getMessage().contains("malformed"), bad.getMessage());
        }
    }

    private static void send(UctWorker w, RecordedEvents ev, UctEndpoint ep, int id, String text) {
        ByteBuffer local = ByteBuffer.allocateDirect(64);
        byte[] bytes = text.getBytes(java.nio.charset.StandardCharsets.ISO_8859_1);
        local.put(0, bytes);
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        int s;
        while ((s = ep.activeMessageCopy(id, BufferUtil.address(local), bytes.length)) == UctStatus.NO_RESOURCE) {
            assertTrue(System.nanoTime() < deadline, "the tcp endpoint never had room");
            w.progress();
            w.drain(ev);
        }
        assertEquals(UctStatus.OK, s, UctStatus.describe(s));
    }

    @Test
    void tcpCarriesActiveMessagesAndZeroCopyPuts() {
        UctResource r = UcxAssumptions.resource("tcp", "lo");
        try (UctWorker w = UctWorker.create()) {
            UctIface a = w.open(r, Map.of());
            UctIface b = w.open(r, Map.of());
            UctIfaceAttributes attrs = a.attributes();
            assertTrue(attrs.has(UctIfaceAttributes.AM_BCOPY) && attrs.has(UctIfaceAttributes.PUT_ZCOPY), attrs::toString);
            assertEquals(0, attrs.atomic64Post(), "UCT's tcp does no atomics");
            UctEndpoint ep = a.connect(b.address());
            ByteBuffer local = ByteBuffer.allocateDirect(64);
            byte[] text = "over tcp".getBytes(java.nio.charset.StandardCharsets.ISO_8859_1);
            local.put(0, text);
            RecordedEvents ev = new RecordedEvents();
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
            int s;
            while ((s = ep.activeMessageCopy(9, BufferUtil.address(local), text.length)) == UctStatus.NO_RESOURCE) {
                assertTrue(System.nanoTime() < deadline, "the tcp endpoint never had room");
                w.progress();
                w.drain(ev);
            }
            assertEquals(UctStatus.OK, s, UctStatus.describe(s));
            while (ev.messages.isEmpty() && System.nanoTime() < deadline) {
                w.progress();
                w.drain(ev);
            }
            assertEquals(List.of("9:over tcp"), ev.messages);
            // UCT's flush after a message waits for its peer's acknowledgement: its completion
            // comes back as an event with the token (how a put on an adapter is answered).
            int f = ep.flush(77);
            assertEquals(UctStatus.IN_PROGRESS, f, UctStatus.describe(f));
            long[] c = ev.await(w, 77);
            assertEquals(UctStatus.OK, (int) c[0], UctStatus.describe((int) c[0]));
            assertEquals(UctStatus.OK, ep.flush(78), "nothing left to flush");
        }
    }
}
