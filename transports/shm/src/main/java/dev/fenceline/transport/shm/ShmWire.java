package dev.fenceline.transport.shm;

import org.agrona.concurrent.ringbuffer.RecordDescriptor;

/**
 * Messages in the inbox rings (one Agrona ring record each; the record's type is the message
 * type). Offsets are within the record. Every request starts with {@code conn, token, origin, seq,
 * low}: the connection (lane) it belongs to, the origin's token, and what exactly-once needs.
 *
 * <pre>
 * CONNECT    conn u64, worker id 16, pid u64, start u64, gate slot u32, name length u32, control
 *            segment name (the gate is the origin's, in its control segment: see Gates)
 * CONNECTED  conn u64, largest payload u32
 * PUT        conn, token, origin, seq, low, key u64, address u64, data (the rest)
 * GET        conn, token, origin, seq, low, key u64, address u64, length u32
 * ATOMIC     conn, token, origin, seq, low, key u64, address u64, kind u8, op u8, width u8, pad 5,
 *            operand u64, compare u64
 * AM         conn, token, origin, seq, low, id u32, header length u32, header, payload (the rest)
 * FLUSH      conn, token
 * ACK        conn, token, value u64
 * GET_DATA   conn, token, data (the rest)
 * NACK       conn, token, code u8, reason u8, length u16, message
 * RESET      conn, length u16, message: the target dropped the connection (why), every answer it
 *            still owed with it
 * FLUSHED    conn, token
 * BYE        conn
 * </pre>
 *
 * CONNECTED, ACK, FLUSHED, NACK and RESET are claimed as whole cache lines ({@link #claimLength}):
 * their records may run past their content, zeros to the line's end, and their readers take no
 * length from the record's size.
 */
final class ShmWire {
    static final int CONNECT = 1;
    static final int CONNECTED = 2;
    static final int PUT = 10;
    static final int GET = 11;
    static final int ATOMIC = 12;
    static final int AM = 13;
    static final int FLUSH = 14;
    static final int ACK = 20;
    static final int GET_DATA = 21;
    static final int NACK = 22;
    static final int FLUSHED = 23;
    static final int BYE = 30;
    static final int RESET = 31;

    static final int CONN = 0;
    static final int TOKEN = 8;
    static final int ORIGIN = 16;
    static final int SEQ = 24;
    static final int LOW = 32;
    /** First field after the request prefix. */
    static final int BODY = 40;
    static final int RMA_DATA = BODY + 16;
    static final int GET_LENGTH = BODY + 16;
    static final int ATOMIC_KIND = BODY + 16;
    static final int ATOMIC_OPERAND = BODY + 24;
    static final int ATOMIC_COMPARE = BODY + 32;
    static final int ATOMIC_LENGTH = BODY + 40;
    static final int AM_ID = BODY;
    static final int AM_HEADER_LENGTH = BODY + 4;
    static final int AM_DATA = BODY + 8;
    static final int REPLY_VALUE = 16;
    static final int MAX_TEXT = 1024;
    /** A cache line, the unit the fixed-size answers are claimed in. */
    static final int LINE = 64;

    static final byte KIND_POST = 0;
    static final byte KIND_FETCH = 1;
    static final byte KIND_CSWAP = 2;

    private ShmWire() {
    }

    /**
     * The body length to claim for a record of {@code type} whose content is {@code length} bytes.
     * The answers of fixed size (their readers take their lengths from their own fields or not at
     * all, never from the record's size) are claimed as whole cache lines: an origin's polling
     * thread reads each answer while the target writes the next record, and a line the two share
     * moves between their cores twice a record. With the requests' records that fill whole lines
     * (an 8-byte active message), the ring's records then all start on lines of their own. Measured
     * on active-message ping-pong between two processes (docs/performance.md, "Answers on lines of
     * their own").
     */
    static int claimLength(int type, int length) {
        return switch (type) {
            case CONNECTED, ACK, FLUSHED, NACK, RESET ->
                    org.agrona.BitUtil.align(length + RecordDescriptor.HEADER_LENGTH, LINE) - RecordDescriptor.HEADER_LENGTH;
            default -> length;
        };
    }

    /**
     * @param type a message type read from a ring
     * @return its name, for errors
     */
    static String name(int type) {
        return switch (type) {
            case CONNECT -> "CONNECT";
            case CONNECTED -> "CONNECTED";
            case PUT -> "PUT";
            case GET -> "GET";
            case ATOMIC -> "ATOMIC";
            case AM -> "AM";
            case FLUSH -> "FLUSH";
            case ACK -> "ACK";
            case GET_DATA -> "GET_DATA";
            case NACK -> "NACK";
            case FLUSHED -> "FLUSHED";
            case BYE -> "BYE";
            case RESET -> "RESET";
            default -> "message of type " + type;
        };
    }
}
