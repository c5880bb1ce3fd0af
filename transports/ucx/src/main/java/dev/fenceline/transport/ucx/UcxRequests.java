package dev.fenceline.transport.ucx;

import dev.fenceline.spi.support.WireCodes;
import java.nio.ByteBuffer;
import org.agrona.concurrent.UnsafeBuffer;

/**
 * A worker's software requests as they go on the wire ({@link UcxWire}): each written into one
 * request buffer and handed to UCT as an active message; a message too large for one UCT message
 * goes in parts, the shortest without an exactly-once number as a SHORT MESSAGE, a large put from
 * native memory from where it is. What the target applies and
 * answers; the data path decides what goes this way. Agent thread only.
 */
final class UcxRequests {
    private final UcxSender sender;
    private final UnsafeBuffer request;

    /**
     * @param sender hands messages to UCT
     * @param maxRequest the largest request (header included) the ifaces carry in one message
     */
    UcxRequests(UcxSender sender, int maxRequest) {
        this.sender = sender;
        this.request = new UnsafeBuffer(ByteBuffer.allocateDirect(Math.max(maxRequest, UcxWire.REQUEST_HEADER))
                .order(java.nio.ByteOrder.nativeOrder()));
    }

    /**
     * Writes and sends a software request: a MESSAGE too large for one UCT message goes in parts
     * first, one that {@link #goesShort} as a SHORT MESSAGE (the caller holds the lane's lock).
     *
     * @return whether the request left the lane's queue (sent, or failed with its channel)
     */
    boolean send(UcxLane lane, UcxOp op) {
        if (op.kind == UcxOp.Kind.MESSAGE) {
            UcxSender.Sent parts = parts(lane, op);
            if (parts != UcxSender.Sent.SENT) {
                return parts == UcxSender.Sent.FAILED; // failed: the channel's failure fails the lane
            }
        }
        if (op.kind == UcxOp.Kind.MESSAGE && goesShort(op.sequence, op.lowWater, op.partSent, op.amId,
                op.header.remaining(), op.local.remaining())) {
            return sent(lane, op, sender.trySend(lane.channel, UcxWire.AM_SHORT_MESSAGE, request, writeShort(lane, op)));
        }
        int length = writeRequest(lane, op);
        UcxSender.Sent s = gathered(op)
                ? sender.trySend(lane.channel, UcxWire.AM_REQUEST, request, length,
                        org.agrona.BufferUtil.address(op.local) + op.local.position(), op.local.remaining())
                : sender.trySend(lane.channel, UcxWire.AM_REQUEST, request, length);
        return sent(lane, op, s);
    }

    /** @return whether the request left the lane's queue, as {@link #send} says */
    private static boolean sent(UcxLane lane, UcxOp op, UcxSender.Sent s) {
        if (s == UcxSender.Sent.NO_ROOM) {
            return false;
        }
        if (s == UcxSender.Sent.FAILED) {
            return true; // the channel's failure fails the lane; the revocation says what was sent
        }
        op.state = UcxOp.State.SENT;
        lane.traffic.softwareInFlight++;
        return true;
    }

    /**
     * Sends the leading parts of a message too large for one UCT message (the caller holds the
     * lane's lock), each as large as one carries, until the rest fits the MESSAGE itself. Where UCT
     * has no room, the next pass goes on from the part it refused; the lane's queue stays at this
     * message meanwhile, so its parts go in a row on the connection. Until the MESSAGE leaves, the
     * target has applied nothing of it.
     *
     * @return SENT once only the MESSAGE is left to send
     */
    private UcxSender.Sent parts(UcxLane lane, UcxOp op) {
        int room = Math.min(UcxWire.softwarePayload(lane.channel.iface.attributes().amMaxBcopy()),
                request.capacity() - UcxWire.REQUEST_HEADER);
        int total = op.header.remaining() + op.local.remaining();
        while (total - op.partSent > room) {
            requestFields(lane, op);
            request.putByte(UcxWire.KIND, UcxWire.PART);
            request.putInt(UcxWire.LENGTH, total);
            request.putLong(UcxWire.ADDRESS, op.partSent);
            copyMessage(op, op.partSent, room, UcxWire.REQUEST_HEADER);
            UcxSender.Sent s = sender.trySend(lane.channel, UcxWire.AM_REQUEST, request, UcxWire.REQUEST_HEADER + room);
            if (s != UcxSender.Sent.SENT) {
                return s;
            }
            op.partSent += room;
        }
        return UcxSender.Sent.SENT;
    }

    /** Copies bytes {@code from} to {@code from + n} of a message (header, then payload) to the request at {@code at}. */
    private void copyMessage(UcxOp op, int from, int n, int at) {
        ByteBuffer h = op.header;
        int hn = h.remaining();
        if (from < hn) {
            int k = Math.min(n, hn - from);
            request.putBytes(at, h, h.position() + from, k);
            at += k;
            from += k;
            n -= k;
        }
        if (n > 0) {
            request.putBytes(at, op.local, op.local.position() + from - hn, n);
        }
    }

    private void requestFields(UcxLane lane, UcxOp op) {
        UnsafeBuffer b = request;
        b.putLong(UcxWire.CONN, lane.conn);
        b.putLong(UcxWire.TOKEN, op.token);
        b.putLong(UcxWire.ORIGIN, op.origin);
        b.putLong(UcxWire.SEQ, op.sequence);
        b.putLong(UcxWire.LOW, op.lowWater);
        b.putLong(UcxWire.KEY, op.key == null ? 0 : op.key.keyId());
        b.putLong(UcxWire.ADDRESS, op.remoteAddress);
        b.putByte(UcxWire.ATOMIC, op.atomicOp == null ? 0 : WireCodes.atomicCode(op.atomicOp));
        b.putByte(UcxWire.WIDTH, (byte) op.width);
        b.putByte(UcxWire.FLAGS, op.answerMayWait ? UcxWire.ANSWER_MAY_WAIT : 0);
        b.putLong(UcxWire.OPERAND, op.operand);
        b.putLong(UcxWire.COMPARE, op.compare);
    }

    /**
     * Whether an active message goes as a SHORT MESSAGE ({@link UcxWire}): one without an exactly-once
     * number, sent whole, whose id, header and payload fit that form.
     *
     * @param sequence its exactly-once number, negative for none
     * @param lowWater the low-water mark it carries, negative for none
     * @param partSent bytes of it already sent in parts
     * @param amId its handler's id
     * @param headerLength its header's bytes
     * @param payloadLength its payload's bytes
     */
    static boolean goesShort(long sequence, long lowWater, int partSent, int amId, int headerLength,
            int payloadLength) {
        return sequence < 0 && lowWater < 0 && partSent == 0 && amId >= 0 && amId <= UcxWire.SHORT_ID_MAX
                && headerLength <= UcxWire.SHORT_HEADER_LENGTH_MAX
                && headerLength + payloadLength <= UcxWire.SHORT_DATA_MAX;
    }

    private int writeShort(UcxLane lane, UcxOp op) {
        return writeShort(request, lane.conn, op.token, op.origin, op.amId, op.header, op.local, op.answerMayWait);
    }

    /**
     * Writes a SHORT MESSAGE ({@link #goesShort} said it fits).
     *
     * @param b where, from its first byte
     * @param conn the lane's connection
     * @param token the message's token
     * @param origin its endpoint's id
     * @param amId its handler's id
     * @param header its header (read from its position, not moved)
     * @param payload its payload (likewise)
     * @param mayWait whether the target may hold its answer back
     * @return its bytes
     */
    static int writeShort(org.agrona.MutableDirectBuffer b, long conn, long token, long origin, int amId,
            ByteBuffer header, ByteBuffer payload, boolean mayWait) {
        int h = header.remaining();
        int n = payload.remaining();
        b.putLong(UcxWire.CONN, conn);
        b.putLong(UcxWire.TOKEN, token);
        b.putLong(UcxWire.ORIGIN, origin);
        b.putShort(UcxWire.SHORT_ID, (short) amId);
        b.putByte(UcxWire.SHORT_BITS, (byte) (h | (mayWait ? UcxWire.SHORT_MAY_WAIT : 0)));
        b.putBytes(UcxWire.SHORT_HEADER, header, header.position(), h);
        b.putBytes(UcxWire.SHORT_HEADER + h, payload, payload.position(), n);
        return UcxWire.SHORT_HEADER + h + n;
    }

    /** Puts from native memory at least this large are sent from where they are ({@link #gathered}). */
    private static final int GATHER_MIN = 4096;

    /**
     * @return whether a software put's payload goes into UCT's buffer straight from the caller's
     *     native memory, one copy fewer than through the request buffer (small ones go short, or are
     *     cheap to copy twice)
     */
    private static boolean gathered(UcxOp op) {
        return op.kind == UcxOp.Kind.PUT && op.local.isDirect() && op.local.remaining() >= GATHER_MIN;
    }

    private int writeRequest(UcxLane lane, UcxOp op) {
        requestFields(lane, op);
        UnsafeBuffer b = request;
        int length = UcxWire.REQUEST_HEADER;
        switch (op.kind) {
            case PUT -> {
                b.putByte(UcxWire.KIND, UcxWire.PUT);
                b.putInt(UcxWire.LENGTH, op.local.remaining());
                if (!gathered(op)) { // else UCT's pack callback copies it from the caller's buffer
                    b.putBytes(length, op.local, op.local.position(), op.local.remaining());
                    length += op.local.remaining();
                }
            }
            case GET -> {
                b.putByte(UcxWire.KIND, UcxWire.GET);
                b.putInt(UcxWire.LENGTH, op.local.remaining());
            }
            case ATOMIC_POST -> b.putByte(UcxWire.KIND, UcxWire.ATOMIC_POST);
            case ATOMIC_FETCH -> b.putByte(UcxWire.KIND, UcxWire.ATOMIC_FETCH);
            case CSWAP -> b.putByte(UcxWire.KIND, UcxWire.CSWAP);
            case MESSAGE -> {
                b.putByte(UcxWire.KIND, UcxWire.MESSAGE);
                b.putInt(UcxWire.LENGTH, op.amId);
                b.putLong(UcxWire.OPERAND, op.header.remaining());
                b.putLong(UcxWire.ADDRESS, op.partSent); // 0 unless parts went before
                int n = op.header.remaining() + op.local.remaining() - op.partSent;
                copyMessage(op, op.partSent, n, length);
                length += n;
            }
            default -> b.putByte(UcxWire.KIND, UcxWire.FLUSH);
        }
        return length;
    }

    /**
     * Sends a software flush (or keepalive probe): the target answers it after everything the lane
     * sent before it.
     *
     * @param lane the lane
     * @param token the flush's token
     * @return what UCT did with it
     */
    UcxSender.Sent flush(UcxLane lane, long token) {
        return control(lane, token, UcxWire.FLUSH);
    }

    /**
     * Asks the target for the answers it holds back for the lane ({@link UcxWire#EXPEDITE}): behind
     * the lane's requests before it, and not answered itself.
     *
     * @param lane the lane
     * @return what UCT did with it
     */
    UcxSender.Sent expedite(UcxLane lane) {
        return control(lane, 0, UcxWire.EXPEDITE);
    }

    private UcxSender.Sent control(UcxLane lane, long token, byte kind) {
        request.putLong(UcxWire.CONN, lane.conn);
        request.putLong(UcxWire.TOKEN, token);
        request.putByte(UcxWire.KIND, kind);
        request.putByte(UcxWire.FLAGS, (byte) 0);
        return sender.trySend(lane.channel, UcxWire.AM_REQUEST, request, UcxWire.REQUEST_HEADER);
    }
}
