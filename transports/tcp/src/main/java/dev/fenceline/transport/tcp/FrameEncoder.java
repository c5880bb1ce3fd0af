package dev.fenceline.transport.tcp;

import dev.fenceline.AtomicOp;
import dev.fenceline.spi.support.WireCodes;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import java.nio.charset.StandardCharsets;
import java.util.UUID;

/**
 * Writes frames in the format of {@link Wire}, length prefix included. Data frames are written as
 * a header buffer followed by the caller's payload, so a payload is never copied by the encoder.
 */
final class FrameEncoder {
    private FrameEncoder() {
    }

    private static ByteBuf start(ByteBufAllocator alloc, byte type, int headerBody, int trailing) {
        return start(alloc, type, headerBody, trailing, 0);
    }

    /** @param room extra capacity for bytes the caller appends to the same buffer */
    private static ByteBuf start(ByteBufAllocator alloc, byte type, int headerBody, int trailing, int room) {
        ByteBuf b = alloc.directBuffer(Wire.LENGTH_FIELD + Wire.FRAME_HEADER + headerBody + room);
        return b.writeInt(Wire.FRAME_HEADER + headerBody + trailing).writeByte(Wire.VERSION).writeByte(type);
    }

    static ByteBuf hello(ByteBufAllocator alloc, UUID client, UUID server, byte[] nonce) {
        ByteBuf b = start(alloc, Wire.HELLO, 4 + 32 + Wire.NONCE, 0).writeShort(Wire.VERSION).writeShort(Wire.VERSION);
        return uuid(uuid(b, client), server).writeBytes(nonce);
    }

    static ByteBuf challenge(ByteBufAllocator alloc, int version, byte[] nonce) {
        return start(alloc, Wire.CHALLENGE, 2 + Wire.NONCE, 0).writeShort(version).writeBytes(nonce);
    }

    /** @param proof the client's proof, or empty where TLS alone authenticates */
    static ByteBuf auth(ByteBufAllocator alloc, byte[] proof) {
        return start(alloc, Wire.AUTH, proof.length, 0).writeBytes(proof);
    }

    /** @param proof the server's proof, or empty where TLS alone authenticates */
    static ByteBuf welcome(ByteBufAllocator alloc, int maxData, byte[] proof) {
        return start(alloc, Wire.WELCOME, 4 + proof.length, 0).writeInt(maxData).writeBytes(proof);
    }

    static ByteBuf refuse(ByteBufAllocator alloc, String reason) {
        byte[] text = text(reason);
        return start(alloc, Wire.REFUSE, 2 + text.length, 0).writeShort(text.length).writeBytes(text);
    }

    /** The PUT header; the caller writes {@code dataLength} bytes of data right after it. */
    static ByteBuf putHeader(ByteBufAllocator alloc, long token, long origin, long seq, long low, long key,
            long address, int dataLength) {
        return start(alloc, Wire.PUT, Wire.RMA_PREFIX, dataLength).writeLong(token).writeLong(origin).writeLong(seq)
                .writeLong(low).writeLong(key).writeLong(address);
    }

    /**
     * A whole PUT frame with its data copied in: for small payloads one buffer and one copy cost
     * less than a second buffer in the channel's outbound queue. The source's position is kept.
     */
    static ByteBuf put(ByteBufAllocator alloc, long token, long origin, long seq, long low, long key, long address,
            java.nio.ByteBuffer data) {
        int n = data.remaining();
        ByteBuf b = start(alloc, Wire.PUT, Wire.RMA_PREFIX, n, n).writeLong(token).writeLong(origin).writeLong(seq)
                .writeLong(low).writeLong(key).writeLong(address);
        int at = b.writerIndex();
        if (n <= SMALL_DATA) {
            copySmall(data, b, at, n);
        } else {
            b.setBytes(at, data.duplicate()); // Netty moves the source it reads: a view of it
        }
        return b.writerIndex(at + n);
    }

    /** Up to this many bytes of a put are copied by absolute reads, without a view of the source. */
    static final int SMALL_DATA = 64;

    /** Copies {@code n} bytes from {@code src}'s position into {@code b} at {@code at}, moving neither. */
    private static void copySmall(java.nio.ByteBuffer src, ByteBuf b, int at, int n) {
        int pos = src.position();
        boolean little = src.order() == java.nio.ByteOrder.LITTLE_ENDIAN; // raw bytes: read and write alike
        int i = 0;
        for (; i + 8 <= n; i += 8) {
            long v = src.getLong(pos + i);
            if (little) {
                b.setLongLE(at + i, v);
            } else {
                b.setLong(at + i, v);
            }
        }
        for (; i < n; i++) {
            b.setByte(at + i, src.get(pos + i));
        }
    }

    static ByteBuf get(ByteBufAllocator alloc, long token, long origin, long seq, long low, long key, long address,
            int length) {
        return start(alloc, Wire.GET, Wire.RMA_PREFIX + 4, 0).writeLong(token).writeLong(origin).writeLong(seq)
                .writeLong(low).writeLong(key).writeLong(address).writeInt(length);
    }

    /**
     * @param kind {@link Wire#ATOMIC_POST}, {@link Wire#ATOMIC_FETCH} or {@link Wire#ATOMIC_CSWAP}
     * @param op the operation (ignored for CSWAP)
     */
    static ByteBuf atomic(ByteBufAllocator alloc, long token, long origin, long seq, long low, long key, long address,
            byte kind, AtomicOp op, int width, long operand, long compare) {
        return start(alloc, Wire.ATOMIC, Wire.ATOMIC_BODY, 0).writeLong(token).writeLong(origin).writeLong(seq)
                .writeLong(low).writeLong(key).writeLong(address).writeByte(kind)
                .writeByte(kind == Wire.ATOMIC_CSWAP ? 0 : WireCodes.atomicCode(op)).writeByte(width).writeLong(operand)
                .writeLong(compare);
    }

    /** The AM header frame part; the caller writes the header and then the payload right after it. */
    static ByteBuf activeMessageHeader(ByteBufAllocator alloc, long token, long origin, long seq, long low, int id,
            int headerLength, int payloadLength) {
        return start(alloc, Wire.AM, Wire.AM_PREFIX, headerLength + payloadLength).writeLong(token).writeLong(origin)
                .writeLong(seq).writeLong(low).writeInt(id).writeInt(headerLength);
    }

    static ByteBuf flush(ByteBufAllocator alloc, long token) {
        return start(alloc, Wire.FLUSH, 8, 0).writeLong(token);
    }

    static ByteBuf ack(ByteBufAllocator alloc, long token, long value) {
        return start(alloc, Wire.ACK, 16, 0).writeLong(token).writeLong(value);
    }

    /** The GET_DATA header; the caller writes {@code dataLength} bytes right after it. */
    static ByteBuf getDataHeader(ByteBufAllocator alloc, long token, int dataLength) {
        return start(alloc, Wire.GET_DATA, 8, dataLength).writeLong(token);
    }

    static ByteBuf nack(ByteBufAllocator alloc, long token, int code, int reason, String message) {
        byte[] text = text(message);
        return start(alloc, Wire.NACK, 10 + 2 + text.length, 0).writeLong(token).writeByte(code).writeByte(reason)
                .writeShort(text.length).writeBytes(text);
    }

    static ByteBuf flushed(ByteBufAllocator alloc, long token) {
        return start(alloc, Wire.FLUSHED, 8, 0).writeLong(token);
    }

    private static ByteBuf uuid(ByteBuf b, UUID id) {
        return b.writeLong(id.getMostSignificantBits()).writeLong(id.getLeastSignificantBits());
    }

    /** UTF-8, cut to the wire's limit on a character boundary. */
    private static byte[] text(String s) {
        byte[] b = s.getBytes(StandardCharsets.UTF_8);
        if (b.length <= Wire.MAX_REASON_BYTES) {
            return b;
        }
        int n = Wire.MAX_REASON_BYTES;
        while (n > 0 && (b[n] & 0xC0) == 0x80) {
            n--;
        }
        return java.util.Arrays.copyOf(b, n);
    }
}
