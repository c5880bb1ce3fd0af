package dev.fenceline.transport.ucx;

import dev.fenceline.FencelineException;
import dev.fenceline.spi.support.WireCodes;
import java.nio.ByteBuffer;
import org.agrona.DirectBuffer;
import org.agrona.collections.Long2ObjectHashMap;

/**
 * The replies to this worker's software requests, on the progress agent: each checked against what
 * its lane sent (a peer's reply is hostile input), then the answer to the endpoint or to the calling
 * thread that posted it, and the lane's next operations handed on.
 */
final class UcxReplies {
    private final UcxDataPath path;
    private final UcxAgent agent;

    UcxReplies(UcxDataPath path, UcxAgent agent) {
        this.path = path;
        this.agent = agent;
    }

    /**
     * A message of replies (one, or ACKs a target held back and sent together), each to the lane its
     * connection names. A record whose length runs past the message goes whole to its lane, which
     * fails on it; nothing after it is read.
     *
     * @param lanes this worker's lanes by connection
     * @param data where it is (valid during the call)
     * @param at its first byte
     * @param length its bytes
     */
    void message(Long2ObjectHashMap<UcxLane> lanes, DirectBuffer data, int at, int length) {
        int end = at + length;
        for (int r = at; end - r >= 8;) {
            int n = end - r >= UcxWire.REPLY_HEADER ? data.getInt(r + UcxWire.REPLY_LENGTH) : -1;
            int size = n < 0 || n > end - r - UcxWire.REPLY_HEADER ? end - r : UcxWire.REPLY_HEADER + n;
            UcxLane lane = lanes.get(data.getLong(r + UcxWire.CONN));
            if (lane != null) {
                reply(lane, data, r, size);
            }
            r += size;
        }
    }

    /**
     * A reply to one of this worker's software requests.
     *
     * @param lane its lane
     * @param data where it is (valid during the call)
     * @param at its first byte
     * @param length its bytes
     */
    void reply(UcxLane lane, DirectBuffer data, int at, int length) {
        if (length < UcxWire.REPLY_HEADER) {
            lane.fail(new FencelineException("ucx: a reply of " + length + " bytes on " + lane + ", less than its header"));
            return;
        }
        long token = data.getLong(at + UcxWire.TOKEN);
        int type = data.getByte(at + UcxWire.REPLY_TYPE);
        int n = data.getInt(at + UcxWire.REPLY_LENGTH);
        if (n < 0 || n > length - UcxWire.REPLY_HEADER) {
            lane.fail(new FencelineException("ucx: a reply on " + lane + " whose " + n + " bytes do not fit its " + length));
            return;
        }
        if (lane.traffic.softwareInFlight > 0) {
            lane.traffic.softwareInFlight--;
        }
        if (token < 0) { // an active message sent on the fast path: its answer goes to the endpoint's ledger
            FencelineException error = type == UcxWire.NACK ? WireCodes.rebuild(data.getByte(at + UcxWire.REPLY_CODE),
                    data.getByte(at + UcxWire.REPLY_REASON), data.getStringWithoutLengthUtf8(at + UcxWire.REPLY_HEADER, n))
                    : null;
            lane.posting.directAnswered(token, error);
            path.advance(lane);
            agent.answered(lane);
            return;
        }
        boolean truthful = switch (type) {
            case UcxWire.FLUSHED -> {
                lane.deliverFlushed(token);
                yield true;
            }
            case UcxWire.ACK -> answer(lane, token, data.getLong(at + UcxWire.REPLY_VALUE), null, null, 0, 0);
            case UcxWire.DATA -> answer(lane, token, 0, null, data, at + UcxWire.REPLY_HEADER, n);
            case UcxWire.NACK -> answer(lane, token, 0, WireCodes.rebuild(data.getByte(at + UcxWire.REPLY_CODE),
                    data.getByte(at + UcxWire.REPLY_REASON), data.getStringWithoutLengthUtf8(at + UcxWire.REPLY_HEADER, n)),
                    null, 0, 0);
            default -> {
                lane.fail(new FencelineException("ucx: a reply of unknown type " + type + " on " + lane));
                yield true;
            }
        };
        if (!truthful) {
            return; // the lane failed
        }
        path.advance(lane);
        agent.answered(lane);
    }

    /**
     * Answers a software request still owed: to the endpoint under the lane's lock, or, if a calling
     * thread posted it, to that caller after the lock (its callbacks must not run under it).
     *
     * @param error its refusal, or null
     * @param data a DATA reply's buffer (its bytes go into the get's buffer under the lock), or null
     * @return false if the reply named an operation that was sent no request: then the lane failed
     */
    private static boolean answer(UcxLane lane, long token, long value, FencelineException error, DirectBuffer data,
            int from, int n) {
        UcxOp op;
        boolean forged;
        FencelineException e = error;
        synchronized (lane.ledger) {
            forged = !lane.ledger.awaitsReply(token);
            op = forged ? null : lane.answeredLocked(token);
            if (op != null && data != null) {
                ByteBuffer sink = op.local;
                if (op.kind != UcxOp.Kind.GET || n != sink.remaining()) {
                    e = new FencelineException("ucx: a reply of " + n + " bytes to " + op + " of "
                            + (op.kind == UcxOp.Kind.GET ? sink.remaining() + " bytes" : "no data"));
                } else {
                    data.getBytes(from, sink, sink.position(), n);
                }
            }
            if (op != null && op.posted == null) {
                if (e != null) {
                    lane.deliverFailed(token, e);
                } else {
                    lane.deliverCompleted(token, value);
                }
            }
        }
        if (forged) { // the peer lies: the lane ends, and its revocation settles what it held
            lane.fail(new FencelineException("ucx: a reply on " + lane + " to operation " + token + ", which was"
                    + " sent no request (it is queued, or on UCT's hardware path)"));
            return false;
        }
        if (op != null && op.posted != null) {
            UcxLanePosting.postedAnswered(op, value, e);
        }
        return true; // or revoked, or answered already
    }

}
