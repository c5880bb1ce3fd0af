package dev.fenceline.transport.tcp;

import dev.fenceline.ActiveMessageException;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.fenceline.AtomicOp;
import dev.fenceline.FencelineException;
import dev.fenceline.OutcomeUnknownException;
import dev.fenceline.RemoteAccessException;
import dev.fenceline.spi.support.WireCodes;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.buffer.Unpooled;
import io.netty.buffer.UnpooledByteBufAllocator;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.UUID;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import java.util.concurrent.TimeUnit;

/** Every frame FrameEncoder writes decodes through FrameDecoder to the same fields; NACK errors round trip. */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class FrameCodecTest {
    private static final int MAX = 4096;
    private static final long T = 0x8000_0000_0000_0001L; // every 64-bit field must survive all its bits
    private static final long O = -2L;
    private static final long K = Long.MAX_VALUE;
    private static final long A = 0x0123_4567_89AB_CDEFL;

    private final ByteBufAllocator alloc = UnpooledByteBufAllocator.DEFAULT; // leak-tracked (paranoid)
    private final List<ByteBuf> buffers = new ArrayList<>();

    @AfterEach
    void everyBufferReleased() {
        for (ByteBuf b : buffers) {
            assertEquals(0, b.refCnt(), "a buffer was not released");
        }
    }

    /** Joins the parts, strips and checks the length prefix, decodes, releases. */
    private List<Object> decode(ByteBuf... parts) throws MalformedFrameException {
        for (ByteBuf p : parts) {
            if (p != Unpooled.EMPTY_BUFFER) { // the shared empty buffer is never released
                buffers.add(p);
            }
        }
        ByteBuf frame = Unpooled.wrappedBuffer(parts);
        try {
            int length = frame.readInt();
            assertEquals(frame.readableBytes(), length, "length prefix");
            Recorder r = new Recorder();
            FrameDecoder.decode(frame, r, MAX);
            assertEquals(Wire.LENGTH_FIELD, frame.readerIndex(), "decode must not move the reader index");
            return r.single();
        } finally {
            frame.release();
        }
    }

    private static byte[] bytes(int n, int seed) {
        byte[] b = new byte[n];
        for (int i = 0; i < n; i++) {
            b[i] = (byte) (seed + 31 * i);
        }
        return b;
    }

    private static ByteBuf data(byte[] b) {
        return Unpooled.wrappedBuffer(b);
    }

    private static String hex(byte[] b) {
        return Recorder.hex(b);
    }

    @Test
    void handshakeFrames() throws Exception {
        UUID client = UUID.randomUUID();
        UUID server = new UUID(-1L, Long.MIN_VALUE);
        byte[] nonce = bytes(Wire.NONCE, 1);
        byte[] proof = bytes(Wire.PROOF, 2);
        assertEquals(List.of("HELLO", 2, 2, client, server, hex(nonce)),
                decode(FrameEncoder.hello(alloc, client, server, nonce)));
        assertEquals(List.of("CHALLENGE", 0xFFFF, hex(nonce)), decode(FrameEncoder.challenge(alloc, 0xFFFF, nonce)));
        assertEquals(List.of("AUTH", hex(proof)), decode(FrameEncoder.auth(alloc, proof)));
        assertEquals(List.of("AUTH", ""), decode(FrameEncoder.auth(alloc, new byte[0])), "TLS only: no proof");
        assertEquals(List.of("WELCOME", MAX, hex(proof)), decode(FrameEncoder.welcome(alloc, MAX, proof)));
        assertEquals(List.of("WELCOME", MAX, ""), decode(FrameEncoder.welcome(alloc, MAX, new byte[0])));
        assertEquals(List.of("REFUSE", "wrong secret: ünïcode ✓"),
                decode(FrameEncoder.refuse(alloc, "wrong secret: ünïcode ✓")));
        assertEquals(List.of("REFUSE", ""), decode(FrameEncoder.refuse(alloc, "")));
    }

    @Test
    void putAndGetDataCarryTheirPayload() throws Exception {
        for (int n : new int[] {0, 1, 100, MAX}) {
            byte[] d = bytes(n, n);
            assertEquals(List.of("PUT", T, O, 7L, 5L, K, A, hex(d)),
                    decode(FrameEncoder.putHeader(alloc, T, O, 7, 5, K, A, n), data(d)), "PUT of " + n);
            assertEquals(List.of("GET_DATA", T, hex(d)),
                    decode(FrameEncoder.getDataHeader(alloc, T, n), data(d)), "GET_DATA of " + n);
        }
    }

    /**
     * A whole PUT frame copies its data from where the source stands, whatever the source's byte
     * order, kind and position (small payloads by absolute reads, larger through a view), and leaves
     * the source where it was.
     */
    @Test
    void aWholePutCarriesItsDataAndLeavesTheSourceAlone() throws Exception {
        for (int n : new int[] {0, 1, 7, 8, 9, 15, 16, 17, FrameEncoder.SMALL_DATA - 1, FrameEncoder.SMALL_DATA,
                FrameEncoder.SMALL_DATA + 1, 100}) {
            byte[] d = bytes(n, n + 3);
            for (java.nio.ByteOrder order : new java.nio.ByteOrder[] {java.nio.ByteOrder.BIG_ENDIAN,
                    java.nio.ByteOrder.LITTLE_ENDIAN}) {
                for (boolean direct : new boolean[] {false, true}) {
                    java.nio.ByteBuffer src = (direct ? java.nio.ByteBuffer.allocateDirect(n + 5)
                            : java.nio.ByteBuffer.allocate(n + 5)).order(order);
                    src.position(3);
                    src.put(d);
                    src.position(3).limit(3 + n);
                    String what = "PUT of " + n + ", " + order + (direct ? ", direct" : ", heap");
                    assertEquals(List.of("PUT", T, O, 7L, 5L, K, A, hex(d)),
                            decode(FrameEncoder.put(alloc, T, O, 7, 5, K, A, src)), what);
                    assertEquals(3, src.position(), what);
                    assertEquals(3 + n, src.limit(), what);
                }
            }
        }
    }

    @Test
    void getFlushAckFlushed() throws Exception {
        assertEquals(List.of("GET", T, O, -1L, -1L, K, A, 0), decode(FrameEncoder.get(alloc, T, O, -1, -1, K, A, 0)));
        assertEquals(List.of("GET", T, O, K, 0L, K, A, MAX), decode(FrameEncoder.get(alloc, T, O, K, 0, K, A, MAX)));
        assertEquals(List.of("FLUSH", T), decode(FrameEncoder.flush(alloc, T)));
        assertEquals(List.of("ACK", T, O), decode(FrameEncoder.ack(alloc, T, O)));
        assertEquals(List.of("FLUSHED", O), decode(FrameEncoder.flushed(alloc, O)));
    }

    @Test
    void atomicsOfEveryKindOperationAndWidth() throws Exception {
        for (int width : new int[] {4, 8}) {
            for (byte kind : new byte[] {Wire.ATOMIC_POST, Wire.ATOMIC_FETCH}) {
                for (AtomicOp op : AtomicOp.values()) {
                    assertEquals(List.of("ATOMIC", T, O, 3L, 2L, K, A, (int) kind, op, width, -5L, 0L),
                            decode(FrameEncoder.atomic(alloc, T, O, 3, 2, K, A, kind, op, width, -5, 0)),
                            kind + " " + op + " width " + width);
                }
            }
            // CSWAP ignores the operation it is given and decodes with none.
            assertEquals(List.of("ATOMIC", T, O, 3L, 3L, K, A, (int) Wire.ATOMIC_CSWAP, "none", width, O, T),
                    decode(FrameEncoder.atomic(alloc, T, O, 3, 3, K, A, Wire.ATOMIC_CSWAP, AtomicOp.XOR, width, O,
                            T)));
        }
    }

    @Test
    void activeMessageSplitsHeaderFromPayload() throws Exception {
        for (int[] split : new int[][] {{0, 0}, {5, 0}, {0, 9}, {5, 9}, {MAX - 1, 1}}) {
            byte[] h = bytes(split[0], 11);
            byte[] p = bytes(split[1], 99);
            assertEquals(List.of("AM", T, O, 0L, 0L, -7, hex(h), hex(p)),
                    decode(FrameEncoder.activeMessageHeader(alloc, T, O, 0, 0, -7, h.length, p.length), data(h),
                            data(p)), "AM " + split[0] + "+" + split[1]);
        }
    }

    @Test
    void nackCarriesItsMessage() throws Exception {
        assertEquals(List.of("NACK", T, 255, 254, "déjà vu"), decode(FrameEncoder.nack(alloc, T, 255, 254, "déjà vu")));
        assertEquals(List.of("NACK", T, 0, 0, ""), decode(FrameEncoder.nack(alloc, T, 0, 0, "")));
    }

    @Test
    void longMessagesAreCutOnACharacterBoundary() throws Exception {
        String fits = "a".repeat(Wire.MAX_REASON_BYTES - 3) + "€"; // exactly the limit
        String[][] cases = {
            {fits, fits},
            {"a".repeat(Wire.MAX_REASON_BYTES + 500), "a".repeat(Wire.MAX_REASON_BYTES)},
            {"a".repeat(1023) + "é", "a".repeat(1023)}, // 2-byte character across the limit
            {"a".repeat(1022) + "€x", "a".repeat(1022)}, // 3-byte character across the limit
            {"a".repeat(1021) + "😀b", "a".repeat(1021)}, // 4-byte character across the limit
            {"a".repeat(1020) + "😀b", "a".repeat(1020) + "😀"}, // 4-byte character ending at the limit
        };
        for (String[] c : cases) {
            List<Object> nack = decode(FrameEncoder.nack(alloc, T, 1, 2, c[0]));
            assertEquals(c[1], nack.get(4));
            assertTrue(c[1].getBytes(StandardCharsets.UTF_8).length <= Wire.MAX_REASON_BYTES);
            assertEquals(List.of("REFUSE", c[1]), decode(FrameEncoder.refuse(alloc, c[0])));
        }
    }

    @Test
    void everyRemoteAccessReasonRoundTrips() throws Exception {
        Set<Integer> codes = new HashSet<>();
        for (RemoteAccessException.Reason reason : RemoteAccessException.Reason.values()) {
            FencelineException back = roundTrip(new RemoteAccessException(reason, "refused: " + reason));
            assertSame(RemoteAccessException.class, back.getClass());
            assertEquals(reason, ((RemoteAccessException) back).reason());
            assertEquals("refused: " + reason, back.getMessage());
            assertTrue(codes.add(WireCodes.reasonCode(back)), "reason codes are distinct");
        }
        assertTrue(!codes.contains(0), "0 means no reason");
    }

    @Test
    void otherErrorsRoundTripToTheirClass() throws Exception {
        for (FencelineException e : List.of(new ActiveMessageException("no handler for id 3"),
                new OutcomeUnknownException("lane died"), new dev.fenceline.EndpointFailedException("refused"),
                new FencelineException("plain"))) {
            FencelineException back = roundTrip(e);
            assertSame(e.getClass(), back.getClass());
            assertEquals(e.getMessage(), back.getMessage());
        }
        assertNotEquals(WireCodes.errorCode(new ActiveMessageException("x")), WireCodes.errorCode(new FencelineException("x")));
    }

    @Test
    void unknownCodesBecomePlainErrors() {
        FencelineException badReason = WireCodes.rebuild(WireCodes.REMOTE_ACCESS, 200, "m");
        assertSame(FencelineException.class, badReason.getClass());
        assertTrue(badReason.getMessage().startsWith("m") && badReason.getMessage().contains("200"));
        assertSame(FencelineException.class, WireCodes.rebuild(99, 0, "m").getClass());
        assertEquals("m", WireCodes.rebuild(99, 0, "m").getMessage());
    }

    private FencelineException roundTrip(FencelineException e) throws MalformedFrameException {
        List<Object> nack = decode(FrameEncoder.nack(alloc, T, WireCodes.errorCode(e), WireCodes.reasonCode(e),
                e.getMessage()));
        return WireCodes.rebuild((Integer) nack.get(2), (Integer) nack.get(3), (String) nack.get(4));
    }
}
