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
    /** What {@link #answer} made of a reply. */
    private enum Answer {
        /** It named an operation that was sent no request: the lane failed. */
        FORGED,
        /** It named an operation the ledger does not hold. */
        UNKNOWN,
        /** It answered a request in flight. */
        ANSWERED
    }

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
        if (token < 0) { // an active message sent on the fast path: its answer goes to the endpoint's ledger
            if (type != UcxWire.ACK && type != UcxWire.NACK) {
                unexpected(lane, "of type " + type + " to direct message " + token + ", which is answered with an ACK"
                        + " or a NACK only");
                return;
            }
            FencelineException error = type == UcxWire.NACK ? WireCodes.rebuild(data.getByte(at + UcxWire.REPLY_CODE),
                    data.getByte(at + UcxWire.REPLY_REASON), data.getStringWithoutLengthUtf8(at + UcxWire.REPLY_HEADER, n))
                    : null;
            if (!lane.posting.directAnswered(token, error)) {
                unexpected(lane, "to direct message " + token + ", which is not the oldest one unanswered");
                return;
            }
            lane.traffic.replied();
            path.advance(lane);
            agent.answered(lane);
            return;
        }
        boolean truthful = switch (type) {
            case UcxWire.FLUSHED -> {
                if (!lane.traffic.flushAnswered(token)) {
                    yield unexpected(lane, "FLUSHED for " + token + ", which is not the oldest flush unanswered");
                }
                lane.deliverFlushed(token);
                yield true;
            }
            case UcxWire.ACK -> matched(lane, token, answer(lane, token, data.getLong(at + UcxWire.REPLY_VALUE), null,
                    null, 0, 0));
            case UcxWire.DATA -> matched(lane, token, answer(lane, token, 0, null, data, at + UcxWire.REPLY_HEADER, n));
            case UcxWire.NACK -> matched(lane, token, answer(lane, token, 0, WireCodes.rebuild(
                    data.getByte(at + UcxWire.REPLY_CODE), data.getByte(at + UcxWire.REPLY_REASON),
                    data.getStringWithoutLengthUtf8(at + UcxWire.REPLY_HEADER, n)), null, 0, 0));
            default -> {
                lane.fail(new FencelineException("ucx: a reply of unknown type " + type + " on " + lane));
                yield false;
            }
        };
        if (!truthful) {
            return; // the lane failed, or has ended and the reply goes nowhere
        }
        path.advance(lane);
        agent.answered(lane);
    }

    /**
     * A reply answered no request of the lane's that waits for one. While the lane lives, each has one
     * (its requests and their answers go in order on one connection), so the target broke the protocol:
     * the lane fails, and its revocation settles what it held. Once the lane failed or ended, answers
     * to what it gave up may still come, and go nowhere. Either way the reply counts for nothing: were
     * it counted as an answer, the lane would take a request still unanswered for answered, and let a
     * hardware operation overtake it, or a flush end before it.
     *
     * @return false
     */
    private static boolean unexpected(UcxLane lane, String what) {
        if (lane.isLive()) {
            lane.fail(new FencelineException("ucx: a reply on " + lane + " " + what));
        }
        return false;
    }

    /** @return whether a reply {@link #answer} took counts as the answer to a request in flight */
    private static boolean matched(UcxLane lane, long token, Answer answered) {
        if (answered == Answer.FORGED) {
            return false;
        }
        if (answered == Answer.UNKNOWN) {
            return unexpected(lane, "to operation " + token + ", which is not unanswered");
        }
        lane.traffic.replied();
        return true;
    }

    /**
     * Answers a software request still owed: to the endpoint under the lane's lock, or, if a calling
     * thread posted it, to that caller after the lock (its callbacks must not run under it).
     *
     * @param error its refusal, or null
     * @param data a DATA reply's buffer (its bytes go into the get's buffer under the lock), or null
     * @return what it made of the reply ({@link Answer})
     */
    private static Answer answer(UcxLane lane, long token, long value, FencelineException error, DirectBuffer data,
            int from, int n) {
        UcxOp op;
        boolean forged;
        boolean known;
        FencelineException e = error;
        synchronized (lane.ledger) {
            known = lane.ledger.holds(token);
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
            } else if (op != null && e == null && op.kind == UcxOp.Kind.GET) {
                // A get's answer is its bytes or its refusal: an ACK would leave its buffer unwritten
                e = new FencelineException("ucx: an ACK without data to " + op + " of " + op.local.remaining()
                        + " bytes; its buffer was not written");
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
            return Answer.FORGED;
        }
        if (op != null && op.posted != null) {
            UcxLanePosting.postedAnswered(op, value, e);
        }
        return known ? Answer.ANSWERED : Answer.UNKNOWN;
    }

}
