package dev.fenceline.transport.tcp;

/**
 * The TCP transport's wire format, version 2. Every frame is a 4-byte big-endian length (of what
 * follows), a version byte, a type byte and the type's body:
 *
 * <pre>
 * HELLO      min u16, max u16, client worker id 16, expected server worker id 16, client nonce 32
 * CHALLENGE  version u16, server nonce 32
 * AUTH       client proof: 32, or none (0) where TLS alone authenticates
 * WELCOME    largest payload this target accepts u32 (the origin sends no more), server proof 32 or 0
 * REFUSE     reason: u16 length, UTF-8
 * PUT        token u64, origin u64, seq u64, low u64, key u64, address u64, data (the rest)
 * GET        token u64, origin u64, seq u64, low u64, key u64, address u64, length u32
 * ATOMIC     token u64, origin u64, seq u64, low u64, key u64, address u64, kind u8, op u8, width u8,
 *            operand u64, compare u64
 * AM         token u64, origin u64, seq u64, low u64, id u32, header length u32, header, payload (the rest)
 * FLUSH      token u64
 * ACK        token u64, value u64
 * GET_DATA   token u64, data (the rest)
 * NACK       token u64, error code u8, reason u8, message: u16 length, UTF-8
 * FLUSHED    token u64
 * </pre>
 *
 * The client proves it knows the secret first; the server proves itself only to a client that did,
 * so probing a server yields nothing to guess the secret from offline (see {@link Handshake}).
 *
 * <p>{@code seq} is the operation's sequence number on its origin endpoint (-1: not deduplicated) and
 * {@code low} the origin's low-water mark (see {@link dev.fenceline.spi.support.DedupWindow}).
 *
 * <p>Codes are spelled out here rather than taken from enum ordinals, so reordering a Java enum can
 * never change the protocol.
 */
final class Wire {
    static final byte VERSION = 2;
    static final int LENGTH_FIELD = 4;
    static final int FRAME_HEADER = 2;
    static final int NONCE = 32;
    static final int PROOF = 32;
    static final int MAX_REASON_BYTES = 1024;

    static final byte HELLO = 1;
    static final byte CHALLENGE = 2;
    static final byte AUTH = 3;
    static final byte WELCOME = 4;
    static final byte REFUSE = 5;
    static final byte PUT = 10;
    static final byte GET = 11;
    static final byte ATOMIC = 12;
    static final byte AM = 13;
    static final byte FLUSH = 14;
    static final byte ACK = 20;
    static final byte GET_DATA = 21;
    static final byte NACK = 22;
    static final byte FLUSHED = 23;

    /** token, origin, seq, low, key, address. */
    static final int RMA_PREFIX = 6 * 8;
    static final int ATOMIC_BODY = RMA_PREFIX + 3 + 16;
    /** token, origin, seq, low, id, header length. */
    static final int AM_PREFIX = 4 * 8 + 8;

    static final byte ATOMIC_POST = 0;
    static final byte ATOMIC_FETCH = 1;
    static final byte ATOMIC_CSWAP = 2;

    private Wire() {
    }

    static String typeName(int type) {
        return switch (type) {
            case HELLO -> "HELLO";
            case CHALLENGE -> "CHALLENGE";
            case AUTH -> "AUTH";
            case WELCOME -> "WELCOME";
            case REFUSE -> "REFUSE";
            case PUT -> "PUT";
            case GET -> "GET";
            case ATOMIC -> "ATOMIC";
            case AM -> "AM";
            case FLUSH -> "FLUSH";
            case ACK -> "ACK";
            case GET_DATA -> "GET_DATA";
            case NACK -> "NACK";
            case FLUSHED -> "FLUSHED";
            default -> "type " + type;
        };
    }
}
