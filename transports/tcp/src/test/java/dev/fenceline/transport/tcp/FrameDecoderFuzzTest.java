package dev.fenceline.transport.tcp;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import dev.fenceline.AtomicOp;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.buffer.ByteBufUtil;
import io.netty.buffer.Unpooled;
import io.netty.buffer.UnpooledByteBufAllocator;
import java.util.Arrays;
import java.util.List;
import java.util.Random;
import java.util.UUID;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import java.util.concurrent.TimeUnit;

/**
 * Seeded fuzzing of FrameDecoder: any bytes either decode within the format's bounds or throw
 * MalformedFrameException, never another exception; and the maxData bound holds for every data frame.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class FrameDecoderFuzzTest {
    private static final long SEED = Long.getLong("fenceline.fuzz.seed", 0x5EED_F00DL);
    private static final int MAX_DATA = 200;
    private static final byte[] TYPES = {Wire.HELLO, Wire.CHALLENGE, Wire.AUTH, Wire.WELCOME, Wire.REFUSE, Wire.PUT,
        Wire.GET, Wire.ATOMIC, Wire.AM, Wire.FLUSH, Wire.ACK, Wire.GET_DATA, Wire.NACK, Wire.FLUSHED};
    private static final int[] EDGES = {0, 1, -1, 2, 4, 8, 255, MAX_DATA, MAX_DATA + 1, Integer.MAX_VALUE,
        Integer.MIN_VALUE};

    private static final ByteBufAllocator UNTRACKED = new UnpooledByteBufAllocator(false, true);

    static {
        System.out.println("FrameDecoderFuzzTest seed " + SEED + " (set -Dfenceline.fuzz.seed to change)");
    }

    /** (a) random bytes; half the inputs get a valid version and type so the bodies are reached. */
    @Test
    void randomBytes() {
        Random rnd = new Random(SEED);
        for (int i = 0; i < 40_000; i++) {
            byte[] in = new byte[rnd.nextInt(301)];
            rnd.nextBytes(in);
            if (in.length >= 2 && rnd.nextBoolean()) {
                in[0] = Wire.VERSION;
                in[1] = TYPES[rnd.nextInt(TYPES.length)];
            }
            check(in, rnd, i);
        }
    }

    /** (b) valid frames with bytes mutated, integer fields set to edge values, truncated or extended. */
    @Test
    void mutatedValidFrames() {
        Random rnd = new Random(SEED + 1);
        for (int i = 0; i < 40_000; i++) {
            byte[] in = validFrame(rnd);
            int mutation = rnd.nextInt(5);
            switch (mutation) {
                case 0 -> in[rnd.nextInt(in.length)] = (byte) rnd.nextInt(256);
                case 1 -> {
                    int at = 2 + rnd.nextInt(in.length - 1); // an int field somewhere after the header
                    in = Arrays.copyOf(in, Math.max(in.length, at + 4));
                    int v = EDGES[rnd.nextInt(EDGES.length)];
                    for (int k = 0; k < 4; k++) {
                        in[at + k] = (byte) (v >>> (24 - 8 * k));
                    }
                }
                case 2 -> in = Arrays.copyOf(in, rnd.nextInt(in.length));
                case 3 -> {
                    int n = in.length;
                    in = Arrays.copyOf(in, n + 1 + rnd.nextInt(64));
                    for (int k = n; k < in.length; k++) {
                        in[k] = (byte) rnd.nextInt(256);
                    }
                }
                default -> {
                    // unchanged: the valid frame itself must decode
                }
            }
            if (!check(in, rnd, i) && mutation == 4) {
                fail(failure(i, in, "an unmutated frame from FrameEncoder was refused"));
            }
        }
    }

    /** PUT, GET, AM and GET_DATA accept exactly maxData bytes and refuse one more. */
    @Test
    void maxDataIsEnforced() throws Exception {
        for (int n : new int[] {MAX_DATA, MAX_DATA + 1}) {
            boolean over = n > MAX_DATA;
            expect(over, FrameEncoder.putHeader(alloc(), 1, 2, 3, 0, 4, 5, n), Unpooled.wrappedBuffer(new byte[n]));
            expect(over, FrameEncoder.get(alloc(), 1, 2, 3, 0, 4, 5, n));
            expect(over, FrameEncoder.getDataHeader(alloc(), 1, n), Unpooled.wrappedBuffer(new byte[n]));
            for (int header : new int[] {0, 1, n / 2, n}) {
                expect(over, FrameEncoder.activeMessageHeader(alloc(), 1, 2, 3, 0, 4, header, n - header),
                        Unpooled.wrappedBuffer(new byte[n]));
            }
        }
        expect(true, FrameEncoder.get(alloc(), 1, 2, 3, 0, 4, 5, -1));
    }

    private static ByteBufAllocator alloc() {
        return UnpooledByteBufAllocator.DEFAULT;
    }

    /** Decodes (or must refuse) the parts joined, without the length prefix; releases them. */
    private static void expect(boolean refused, ByteBuf... parts) throws MalformedFrameException {
        ByteBuf frame = Unpooled.wrappedBuffer(parts);
        try {
            frame.skipBytes(Wire.LENGTH_FIELD);
            Recorder r = new Recorder();
            if (refused) {
                MalformedFrameException e = assertThrows(MalformedFrameException.class,
                        () -> FrameDecoder.decode(frame, r, MAX_DATA));
                assertTrue(e.getMessage().contains("limit of " + MAX_DATA) || e.getMessage().contains("negative"),
                        e.getMessage());
                assertEquals(List.of(), r.calls);
            } else {
                FrameDecoder.decode(frame, r, MAX_DATA);
                assertEquals(1, r.calls.size());
            }
        } finally {
            frame.release();
        }
    }

    /**
     * Decodes {@code in} from a buffer whose capacity ends with the frame and whose reader index is
     * not 0, so any read outside the frame throws.
     *
     * @return whether the frame decoded
     */
    private static boolean check(byte[] in, Random rnd, int iteration) {
        int lead = rnd.nextInt(4);
        byte[] padded = new byte[lead + in.length + 8];
        rnd.nextBytes(padded);
        System.arraycopy(in, 0, padded, lead, in.length);
        ByteBuf frame = Unpooled.wrappedBuffer(padded, 0, lead + in.length).readerIndex(lead);
        Recorder r = new Recorder();
        try {
            FrameDecoder.decode(frame, r, MAX_DATA);
        } catch (MalformedFrameException e) {
            if (!r.calls.isEmpty()) {
                fail(failure(iteration, in, "the handler was called before the frame was refused: " + r.calls));
            }
            return false;
        } catch (RuntimeException | Error e) {
            throw new AssertionError(failure(iteration, in, e.toString()), e);
        }
        if (r.calls.size() != 1 || frame.readerIndex() != lead || !withinBounds(r.single())) {
            fail(failure(iteration, in, "decoded to " + r.calls + ", reader index " + frame.readerIndex()));
        }
        return true;
    }

    /** The bounds the decoder promises its handler. */
    private static boolean withinBounds(List<Object> call) {
        return switch ((String) call.get(0)) {
            case "PUT" -> ((String) call.get(7)).length() <= 2 * MAX_DATA && identified(call);
            case "GET" -> (Integer) call.get(7) >= 0 && (Integer) call.get(7) <= MAX_DATA && identified(call);
            case "AM" -> ((String) call.get(6)).length() + ((String) call.get(7)).length() <= 2 * MAX_DATA
                    && identified(call);
            case "GET_DATA" -> ((String) call.get(2)).length() <= 2 * MAX_DATA;
            case "ATOMIC" -> ((Integer) call.get(9) == 4 || (Integer) call.get(9) == 8) && identified(call);
            case "REFUSE", "NACK" -> ((String) call.get(call.size() - 1)).length() <= Wire.MAX_REASON_BYTES;
            default -> true;
        };
    }

    /** Sequence number and low-water mark are -1 (none) or non-negative. */
    private static boolean identified(List<Object> call) {
        return (Long) call.get(3) >= -1 && (Long) call.get(4) >= -1;
    }

    private static String failure(int iteration, byte[] in, String what) {
        return "seed " + SEED + ", iteration " + iteration + ": " + what + "\n  input " + ByteBufUtil.hexDump(in)
                + "\n  reproduce: mvn -B -o test -pl transports/tcp -Dtest=FrameDecoderFuzzTest -Dfenceline.fuzz.seed="
                + SEED;
    }

    /** One random valid frame of a random type, without its length prefix. */
    private static byte[] validFrame(Random rnd) {
        ByteBufAllocator a = UNTRACKED; // the bytes are copied out at once; tracking would only slow this down
        long t = rnd.nextLong();
        long seq = rnd.nextInt(3) - 1L;
        byte[] data = new byte[rnd.nextInt(MAX_DATA + 1)];
        rnd.nextBytes(data);
        byte[] n32 = Arrays.copyOf(data, 32);
        ByteBuf head = switch (TYPES[rnd.nextInt(TYPES.length)]) {
            case Wire.HELLO -> FrameEncoder.hello(a, new UUID(t, rnd.nextLong()), new UUID(seq, t), n32);
            case Wire.CHALLENGE -> FrameEncoder.challenge(a, 1, n32);
            case Wire.AUTH -> FrameEncoder.auth(a, n32);
            case Wire.WELCOME -> FrameEncoder.welcome(a, 1 + rnd.nextInt(1 << 20), rnd.nextBoolean() ? n32 : new byte[0]);
            case Wire.REFUSE -> FrameEncoder.refuse(a, "refused " + t);
            case Wire.PUT -> FrameEncoder.putHeader(a, t, t, seq, seq, t, t, data.length);
            case Wire.GET -> FrameEncoder.get(a, t, t, seq, seq, t, t, data.length);
            case Wire.ATOMIC -> FrameEncoder.atomic(a, t, t, seq, seq, t, t, (byte) rnd.nextInt(3),
                    AtomicOp.values()[rnd.nextInt(AtomicOp.values().length)], rnd.nextBoolean() ? 4 : 8, t, t);
            case Wire.AM -> {
                int h = rnd.nextInt(data.length + 1);
                yield FrameEncoder.activeMessageHeader(a, t, t, seq, seq, (int) t, h, data.length - h);
            }
            case Wire.FLUSH -> FrameEncoder.flush(a, t);
            case Wire.ACK -> FrameEncoder.ack(a, t, seq);
            case Wire.GET_DATA -> FrameEncoder.getDataHeader(a, t, data.length);
            case Wire.NACK -> FrameEncoder.nack(a, t, rnd.nextInt(4), rnd.nextInt(8), "nack " + t);
            default -> FrameEncoder.flushed(a, t);
        };
        int trailing = head.getInt(0) + Wire.LENGTH_FIELD - head.readableBytes(); // data the header announces
        byte[] out = new byte[head.readableBytes() - Wire.LENGTH_FIELD + trailing];
        head.getBytes(Wire.LENGTH_FIELD, out, 0, head.readableBytes() - Wire.LENGTH_FIELD);
        System.arraycopy(data, 0, out, out.length - trailing, trailing);
        head.release();
        return out;
    }
}
