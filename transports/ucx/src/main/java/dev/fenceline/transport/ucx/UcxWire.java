package dev.fenceline.transport.ucx;

/**
 * The ucx transport's own messages, carried as UCT active messages (native byte order; the
 * transport runs on x86-64 only). Four UCT message ids: requests from an origin's lane to the
 * target, replies from the target, wireup, and the shortest active messages in a form of their own.
 * Every field a peer wrote is checked before use by
 * the side that reads it ({@link UcxTarget}, {@link UcxAgent}).
 *
 * <pre>
 * REQUEST (id 1), 80 bytes, then data:
 *   0 conn u64   8 token u64   16 origin endpoint u64   24 sequence u64   32 low-water u64
 *   40 kind u8   41 atomic code u8   42 width u8   43 flags u8   44 length u32 (a get's bytes; a message's id)
 *   48 key id u64   56 address u64   64 operand u64 (a message: its header's length)   72 compare u64
 *   80 data: a put's bytes; a message's header, then its payload
 *   A message larger than one UCT message goes in parts, in a row on its connection: PART requests
 *   (length: the message's bytes, header and payload; address: where this part's bytes start in
 *   them), then the MESSAGE itself with the rest (address: where its bytes start). Only the
 *   MESSAGE is answered and numbered for exactly-once; the parts have no effect of their own.
 *   Flags: ANSWER_MAY_WAIT, nobody waits for this request's own answer (an active message a calling
 *   thread sent, read only by a flush): the target may hold its ACK back for a moment, to send several
 *   in one message ({@link UcxHeldAnswers}). EXPEDITE (header only, not answered): send what is held
 *   for this connection now; the origin's flush is waiting for it.
 * SHORT MESSAGE (id 4), 27 bytes, then at most 9 bytes: an active message without an exactly-once
 *   number (a calling thread's direct message, never sent again) whose header and payload are that small.
 *   All 36 bytes fit the first cache line of an element of UCT's shared-memory FIFO (whose own header
 *   takes the line's other 28), so the target reads one line its peer wrote, not two:
 *   0 conn u64 (UCT's own 8-byte header)   8 token u64   16 origin endpoint u64   24 message id u16
 *   26 bit 7 SHORT_MAY_WAIT (as ANSWER_MAY_WAIT), bits 0-6 the header's length
 *   27 data: the message's header, then its payload
 * REPLY (id 2): one or more replies back to back, each 32 bytes, then its data:
 *   0 conn u64   8 token u64   16 type u8   17 error code u8   18 reason u8   19 0   20 length u32
 *   24 value u64   32 data: a get's bytes, or an error's text (UTF-8)
 * WIREUP (id 3): 0 type u8, then per type (see {@link UcxWireup})
 * </pre>
 */
final class UcxWire {
    /** UCT active-message ids. */
    static final int AM_REQUEST = 1;
    static final int AM_REPLY = 2;
    static final int AM_WIREUP = 3;
    static final int AM_SHORT_MESSAGE = 4;

    // REQUEST fields
    static final int CONN = 0;
    static final int TOKEN = 8;
    static final int ORIGIN = 16;
    static final int SEQ = 24;
    static final int LOW = 32;
    static final int KIND = 40;
    static final int ATOMIC = 41;
    static final int WIDTH = 42;
    static final int FLAGS = 43;
    static final int LENGTH = 44;
    static final int KEY = 48;
    static final int ADDRESS = 56;
    static final int OPERAND = 64;
    static final int COMPARE = 72;
    static final int REQUEST_HEADER = 80;

    // SHORT MESSAGE fields (CONN, TOKEN and ORIGIN as in a REQUEST)
    static final int SHORT_ID = 24;
    static final int SHORT_BITS = 26;
    static final int SHORT_HEADER = 27;
    /** The most header and payload bytes a SHORT MESSAGE carries. */
    static final int SHORT_DATA_MAX = 9;
    /** The largest message id a SHORT MESSAGE carries: its u16 field, as large as any handler's id. */
    static final int SHORT_ID_MAX = 0xffff;
    /** The longest header a SHORT MESSAGE carries (bits 0-6). */
    static final int SHORT_HEADER_LENGTH_MAX = 0x7f;
    /** Bit 7 of {@link #SHORT_BITS}: as {@link #ANSWER_MAY_WAIT} in a REQUEST. */
    static final int SHORT_MAY_WAIT = 0x80;

    // REQUEST kinds
    static final byte PUT = 1;
    static final byte GET = 2;
    static final byte ATOMIC_POST = 3;
    static final byte ATOMIC_FETCH = 4;
    static final byte CSWAP = 5;
    static final byte MESSAGE = 6;
    static final byte FLUSH = 7;
    static final byte PART = 8;
    static final byte EXPEDITE = 9;

    // REQUEST flags
    static final byte ANSWER_MAY_WAIT = 1;

    // REPLY fields
    static final int REPLY_TYPE = 16;
    static final int REPLY_CODE = 17;
    static final int REPLY_REASON = 18;
    static final int REPLY_LENGTH = 20;
    static final int REPLY_VALUE = 24;
    static final int REPLY_HEADER = 32;

    // REPLY types
    static final byte ACK = 1;
    static final byte NACK = 2;
    static final byte DATA = 3;
    static final byte FLUSHED = 4;

    /** The longest error text a NACK carries. */
    static final int MAX_TEXT = 512;

    private UcxWire() {
    }

    /**
     * @param amMax the largest message the UCT transport carries in one copied active message
     * @return the largest payload a software operation may carry on it: a put's bytes in a request,
     *     a get's in its reply, a message's header and payload
     */
    static int softwarePayload(long amMax) {
        return (int) Math.max(0, Math.min(Integer.MAX_VALUE, amMax - REQUEST_HEADER));
    }

    static String kindName(int kind) {
        return switch (kind) {
            case PUT -> "PUT";
            case GET -> "GET";
            case ATOMIC_POST -> "ATOMIC_POST";
            case ATOMIC_FETCH -> "ATOMIC_FETCH";
            case CSWAP -> "CSWAP";
            case MESSAGE -> "MESSAGE";
            case FLUSH -> "FLUSH";
            case PART -> "PART";
            case EXPEDITE -> "EXPEDITE";
            default -> "kind " + kind;
        };
    }
}
