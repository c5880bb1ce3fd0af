package dev.fenceline.transport.tcp;

import dev.fenceline.AtomicOp;
import io.netty.buffer.ByteBuf;
import java.util.UUID;

/**
 * What {@link FrameDecoder} found in a frame. Each side overrides the frames it accepts; any other
 * frame is a protocol violation. Buffers passed in are slices of the frame, valid only during the
 * call.
 */
interface FrameHandler {
    default void hello(int minVersion, int maxVersion, UUID client, UUID server, byte[] nonce)
            throws MalformedFrameException {
        throw unexpected(Wire.HELLO);
    }

    default void challenge(int version, byte[] nonce) throws MalformedFrameException {
        throw unexpected(Wire.CHALLENGE);
    }

    default void auth(byte[] proof) throws MalformedFrameException {
        throw unexpected(Wire.AUTH);
    }

    /**
     * @param maxData the largest payload the peer accepts in one operation
     * @param proof the server's proof (empty where TLS alone authenticates)
     */
    default void welcome(int maxData, byte[] proof) throws MalformedFrameException {
        throw unexpected(Wire.WELCOME);
    }

    default void refuse(String reason) throws MalformedFrameException {
        throw unexpected(Wire.REFUSE);
    }

    default void put(long token, long origin, long seq, long low, long key, long address, ByteBuf data)
            throws MalformedFrameException {
        throw unexpected(Wire.PUT);
    }

    default void get(long token, long origin, long seq, long low, long key, long address, int length)
            throws MalformedFrameException {
        throw unexpected(Wire.GET);
    }

    /**
     * @param kind {@link Wire#ATOMIC_POST}, {@link Wire#ATOMIC_FETCH} or {@link Wire#ATOMIC_CSWAP}
     * @param op the operation (null for CSWAP)
     */
    default void atomic(long token, long origin, long seq, long low, long key, long address, int kind, AtomicOp op,
            int width, long operand, long compare) throws MalformedFrameException {
        throw unexpected(Wire.ATOMIC);
    }

    default void activeMessage(long token, long origin, long seq, long low, int id, ByteBuf header, ByteBuf payload)
            throws MalformedFrameException {
        throw unexpected(Wire.AM);
    }

    default void flush(long token) throws MalformedFrameException {
        throw unexpected(Wire.FLUSH);
    }

    default void ack(long token, long value) throws MalformedFrameException {
        throw unexpected(Wire.ACK);
    }

    default void getData(long token, ByteBuf data) throws MalformedFrameException {
        throw unexpected(Wire.GET_DATA);
    }

    default void nack(long token, int code, int reason, String message) throws MalformedFrameException {
        throw unexpected(Wire.NACK);
    }

    default void flushed(long token) throws MalformedFrameException {
        throw unexpected(Wire.FLUSHED);
    }

    private static MalformedFrameException unexpected(byte type) {
        return new MalformedFrameException("unexpected " + Wire.typeName(type) + " frame");
    }
}
