package dev.fenceline.transport.tcp;

import dev.fenceline.AtomicOp;
import dev.fenceline.spi.support.WireCodes;
import io.netty.buffer.ByteBuf;
import java.nio.charset.StandardCharsets;
import java.util.UUID;

/**
 * Parses one frame (without its length prefix) and hands its fields to a {@link FrameHandler}.
 * Pure and allocation-free on the data frames; every bound is checked before a field is read, so
 * any byte sequence either decodes or throws {@link MalformedFrameException} (fuzzed in tests).
 */
final class FrameDecoder {
    private FrameDecoder() {
    }

    /**
     * @param frame the frame's bytes, from version byte to end; its reader index is not moved
     * @param handler receives the fields
     * @param maxData the largest data length this side accepts in a PUT, GET, AM or GET_DATA
     * @throws MalformedFrameException if the frame breaks the format
     */
    static void decode(ByteBuf frame, FrameHandler handler, int maxData) throws MalformedFrameException {
        int start = frame.readerIndex();
        int length = frame.readableBytes();
        if (length < Wire.FRAME_HEADER) {
            throw new MalformedFrameException("frame of " + length + " bytes is shorter than its header");
        }
        int version = frame.getUnsignedByte(start);
        if (version != Wire.VERSION) {
            throw new MalformedFrameException("frame version " + version + " is not " + Wire.VERSION);
        }
        int type = frame.getByte(start + 1);
        int p = start + Wire.FRAME_HEADER;
        int body = length - Wire.FRAME_HEADER;
        switch (type) {
            case Wire.HELLO -> {
                exact(type, body, 4 + 32 + Wire.NONCE);
                handler.hello(frame.getUnsignedShort(p), frame.getUnsignedShort(p + 2), uuid(frame, p + 4),
                        uuid(frame, p + 20), bytes(frame, p + 36, Wire.NONCE));
            }
            case Wire.CHALLENGE -> {
                exact(type, body, 2 + Wire.NONCE);
                handler.challenge(frame.getUnsignedShort(p), bytes(frame, p + 2, Wire.NONCE));
            }
            case Wire.AUTH -> handler.auth(proof(frame, p, body, type));
            case Wire.WELCOME -> {
                atLeast(type, body, 4);
                int limit = frame.getInt(p);
                if (limit < 1) {
                    throw new MalformedFrameException("WELCOME with a payload limit of " + limit);
                }
                handler.welcome(limit, proof(frame, p + 4, body - 4, type));
            }
            case Wire.REFUSE -> handler.refuse(string(frame, p, body, type));
            case Wire.PUT -> {
                atLeast(type, body, Wire.RMA_PREFIX);
                int data = body - Wire.RMA_PREFIX;
                bound(type, data, maxData);
                handler.put(frame.getLong(p), frame.getLong(p + 8), sequence(frame, p + 16), low(frame, p + 24),
                        frame.getLong(p + 32), frame.getLong(p + 40), frame.slice(p + Wire.RMA_PREFIX, data));
            }
            case Wire.GET -> {
                exact(type, body, Wire.RMA_PREFIX + 4);
                int n = frame.getInt(p + Wire.RMA_PREFIX);
                if (n < 0) {
                    throw new MalformedFrameException("GET of negative length " + n);
                }
                bound(type, n, maxData);
                handler.get(frame.getLong(p), frame.getLong(p + 8), sequence(frame, p + 16), low(frame, p + 24),
                        frame.getLong(p + 32), frame.getLong(p + 40), n);
            }
            case Wire.ATOMIC -> {
                exact(type, body, Wire.ATOMIC_BODY);
                int q = p + Wire.RMA_PREFIX;
                int kind = frame.getUnsignedByte(q);
                int opCode = frame.getUnsignedByte(q + 1);
                int width = frame.getUnsignedByte(q + 2);
                if (kind > Wire.ATOMIC_CSWAP) {
                    throw new MalformedFrameException("unknown atomic kind " + kind);
                }
                AtomicOp op = kind == Wire.ATOMIC_CSWAP ? null : WireCodes.atomicOp(opCode);
                if (kind != Wire.ATOMIC_CSWAP && op == null) {
                    throw new MalformedFrameException("unknown atomic operation " + opCode);
                }
                if (width != 4 && width != 8) {
                    throw new MalformedFrameException("atomic width " + width + " is not 4 or 8");
                }
                handler.atomic(frame.getLong(p), frame.getLong(p + 8), sequence(frame, p + 16), low(frame, p + 24),
                        frame.getLong(p + 32), frame.getLong(p + 40), kind, op, width, frame.getLong(q + 3),
                        frame.getLong(q + 11));
            }
            case Wire.AM -> {
                atLeast(type, body, Wire.AM_PREFIX);
                int headerLength = frame.getInt(p + 36);
                int rest = body - Wire.AM_PREFIX;
                if (headerLength < 0 || headerLength > rest) {
                    throw new MalformedFrameException("AM header of " + headerLength + " bytes in a body of " + rest);
                }
                bound(type, rest, maxData);
                int h = p + Wire.AM_PREFIX;
                handler.activeMessage(frame.getLong(p), frame.getLong(p + 8), sequence(frame, p + 16),
                        low(frame, p + 24), frame.getInt(p + 32), frame.slice(h, headerLength),
                        frame.slice(h + headerLength, rest - headerLength));
            }
            case Wire.FLUSH -> {
                exact(type, body, 8);
                handler.flush(frame.getLong(p));
            }
            case Wire.ACK -> {
                exact(type, body, 16);
                handler.ack(frame.getLong(p), frame.getLong(p + 8));
            }
            case Wire.GET_DATA -> {
                atLeast(type, body, 8);
                bound(type, body - 8, maxData);
                handler.getData(frame.getLong(p), frame.slice(p + 8, body - 8));
            }
            case Wire.NACK -> {
                atLeast(type, body, 10);
                handler.nack(frame.getLong(p), frame.getUnsignedByte(p + 8), frame.getUnsignedByte(p + 9),
                        string(frame, p + 10, body - 10, type));
            }
            case Wire.FLUSHED -> {
                exact(type, body, 8);
                handler.flushed(frame.getLong(p));
            }
            default -> throw new MalformedFrameException("unknown frame type " + type);
        }
    }

    private static void exact(int type, int body, int expected) throws MalformedFrameException {
        if (body != expected) {
            throw new MalformedFrameException(Wire.typeName(type) + " body of " + body + " bytes, expected "
                    + expected);
        }
    }

    private static void atLeast(int type, int body, int min) throws MalformedFrameException {
        if (body < min) {
            throw new MalformedFrameException(Wire.typeName(type) + " body of " + body + " bytes, shorter than "
                    + min);
        }
    }

    private static void bound(int type, int data, int max) throws MalformedFrameException {
        if (data > max) {
            throw new MalformedFrameException(Wire.typeName(type) + " of " + data + " bytes exceeds the limit of "
                    + max);
        }
    }

    private static long sequence(ByteBuf frame, int at) throws MalformedFrameException {
        long seq = frame.getLong(at);
        if (seq < -1) {
            throw new MalformedFrameException("sequence number " + seq + " is negative");
        }
        return seq;
    }

    private static long low(ByteBuf frame, int at) throws MalformedFrameException {
        long low = frame.getLong(at);
        if (low < -1) {
            throw new MalformedFrameException("low-water mark " + low + " is negative");
        }
        return low;
    }

    private static UUID uuid(ByteBuf frame, int at) {
        return new UUID(frame.getLong(at), frame.getLong(at + 8));
    }

    private static byte[] bytes(ByteBuf frame, int at, int n) {
        byte[] b = new byte[n];
        frame.getBytes(at, b);
        return b;
    }

    private static String string(ByteBuf frame, int at, int available, int type) throws MalformedFrameException {
        if (available < 2) {
            throw new MalformedFrameException(Wire.typeName(type) + " has no room for its text length");
        }
        int n = frame.getUnsignedShort(at);
        if (n != available - 2 || n > Wire.MAX_REASON_BYTES) {
            throw new MalformedFrameException(Wire.typeName(type) + " text of " + n + " bytes in " + (available - 2)
                    + " (at most " + Wire.MAX_REASON_BYTES + ")");
        }
        return frame.toString(at + 2, n, StandardCharsets.UTF_8);
    }

    /** A proof: none (TLS alone authenticates) or one HMAC-SHA256. */
    private static byte[] proof(ByteBuf frame, int at, int length, int type) throws MalformedFrameException {
        if (length != 0 && length != Wire.PROOF) {
            throw new MalformedFrameException(Wire.typeName(type) + " with a proof of " + length + " bytes (0 or "
                    + Wire.PROOF + ")");
        }
        return bytes(frame, at, length);
    }
}
