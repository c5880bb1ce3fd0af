package dev.fenceline.transport.ucx;

import dev.fenceline.Access;
import dev.fenceline.FencelineException;
import dev.fenceline.RemoteAccessException;
import java.nio.ByteBuffer;
import org.agrona.BufferUtil;
import org.agrona.DirectBuffer;
import org.agrona.collections.Long2ObjectHashMap;

/**
 * The origin side of the lanes' operations, on the progress agent: each lane's operations handed
 * to UCT in post order, through the iface's hardware where it reaches the region (after checking
 * its slot in the owner's key table) and as software requests otherwise; the completions that
 * answer the hardware's (software requests' replies: {@link UcxReplies}).
 */
final class UcxDataPath {
    private final UcxSender sender;
    private final UcxAgent agent;
    /** Software requests, written and sent. */
    private final UcxRequests requests;
    /** For the hardware path of a heap buffer: UCT takes native addresses only. */
    private final BouncePool bounces = new BouncePool(16 << 20);
    /** Hardware operations in flight (zero-copy), by the token UCT echoes. */
    private final Long2ObjectHashMap<UcxOp> inFlight = new Long2ObjectHashMap<>();
    private long nextToken = 1;
    /** The UCT flushes that answer puts and atomic posts where completions are not in place. */
    private final UcxUctFlushes flushes;
    private final UcxRemoteKeys keys;

    UcxDataPath(UcxAgent agent, UcxSender sender, int maxRequest) {
        this.agent = agent;
        this.sender = sender;
        this.keys = new UcxRemoteKeys(agent);
        this.requests = new UcxRequests(sender, maxRequest);
        this.flushes = new UcxUctFlushes(agent, sender, this);
    }

    /** Releases the unpacked keys no calling thread may use (agent thread, at close). */
    void releaseKeys() {
        keys.release();
    }

    // ------------------------------------------------------------------ issuing

    /** Hands a lane's waiting operations to UCT, in order, as far as it can now. */
    void advance(UcxLane lane) {
        while (!lane.traffic.waiting.isEmpty()) {
            UcxOp op = lane.traffic.waiting.peekFirst();
            if (lane.channel.state != UcxChannel.State.READY) {
                return; // failed: the lane's failure report covers it; wiring: it cannot have ops yet
            }
            boolean done = op.isFlush() ? flush(lane, op)
                    : op.kind == UcxOp.Kind.EXPEDITE ? requests.expedite(lane) != UcxSender.Sent.NO_ROOM
                    : issue(lane, op);
            if (!done) {
                return;
            }
            lane.traffic.waiting.pollFirst();
        }
    }

    /** @return whether the operation left the queue (sent, done, failed or withdrawn) */
    private boolean issue(UcxLane lane, UcxOp op) {
        UcxChannel ch = lane.channel;
        UctIface iface = ch.iface;
        if (op.softwareOnly && !iface.attributes().has(UctIfaceAttributes.AM_BCOPY)) {
            // An earlier copy may have been applied, or may still be: only a request the target's
            // window sees may carry it, and this iface carries none (cma, say).
            return fail(lane, op, new dev.fenceline.OutcomeUnknownException("ucx: an earlier copy of this operation"
                    + " may have been applied, and " + lane + " carries no messages to send it again where the"
                    + " target recognizes it (" + iface + "); not sent again"));
        }
        UctRemoteKey rkey = op.kind == UcxOp.Kind.MESSAGE ? null : keys.hardwareKey(lane, op);
        boolean hardware = rkey != null && !op.softwareOnly && hardwareDoes(iface.attributes(), op);
        if (hardware ? lane.traffic.softwareInFlight > 0 : lane.traffic.hardwareInFlight > 0) {
            if (hardware && !lane.traffic.expedited && lane.directAnswersMayWait()) {
                // Some of the answers it waits for may be held back at the target: asked for once.
                lane.traffic.expedited = requests.expedite(lane) == UcxSender.Sent.SENT;
            }
            return false; // one path never overtakes the other within a lane
        }
        lane.traffic.expedited = false;
        if (!hardware && !iface.attributes().has(UctIfaceAttributes.AM_BCOPY)) {
            return fail(lane, op, new FencelineException("ucx: " + lane + " reaches the region of key "
                    + op.key.shortKey() + " neither through its hardware nor with messages (" + iface
                    + " carries none); its key has no part for " + iface.resource().memoryDomain()));
        }
        if (lane.traffic.unfenced && op.fencedBefore) {
            // UCT may still hold the hardware operations before it (RDMA): what a weak fence put
            // after them waits behind UCT's fence. (A software request waits for their answers.)
            int f = ch.ep.fence();
            if (f != UctStatus.OK) {
                lane.fail(new FencelineException("ucx: UCT refused to fence " + lane + ": " + UctStatus.describe(f)));
                return false;
            }
            lane.traffic.unfenced = false;
        }
        try {
            synchronized (lane.ledger) {
                if (!lane.ledger.sendable(op)) {
                    return true;
                }
                try {
                    return hardware ? hardware(lane, op, rkey) : requests.send(lane, op);
                } catch (RemoteAccessException e) {
                    failLocked(lane, op, e);
                    return true;
                }
            }
        } finally {
            failRefused();
        }
    }

    /** @return whether the iface's hardware does this operation at this size */
    private static boolean hardwareDoes(UctIfaceAttributes a, UcxOp op) {
        long n = op.payload();
        return switch (op.kind) {
            case PUT -> a.has(UctIfaceAttributes.PUT_SHORT) && n <= a.putMaxShort()
                    || a.has(UctIfaceAttributes.PUT_BCOPY) && n <= a.putMaxBcopy()
                    || a.has(UctIfaceAttributes.PUT_ZCOPY) && n >= a.putMinZcopy() && n <= a.putMaxZcopy();
            case GET -> a.has(UctIfaceAttributes.GET_SHORT) && n <= a.getMaxShort()
                    || a.has(UctIfaceAttributes.GET_BCOPY) && n <= a.getMaxBcopy()
                    || a.has(UctIfaceAttributes.GET_ZCOPY) && n >= a.getMinZcopy() && n <= a.getMaxZcopy();
            case ATOMIC_POST -> bit(op.width == 4 ? a.atomic32Post() : a.atomic64Post(), op);
            case ATOMIC_FETCH -> bit(op.width == 4 ? a.atomic32Fetch() : a.atomic64Fetch(), op);
            case CSWAP -> ((op.width == 4 ? a.atomic32Fetch() : a.atomic64Fetch()) & (1L << UctIfaceAttributes.CSWAP_BIT)) != 0;
            default -> false;
        };
    }

    private static boolean bit(long mask, UcxOp op) {
        return op.width == 4 || op.width == 8 ? (mask & (1L << atomicCode(op.atomicOp))) != 0 : false;
    }

    private static int atomicCode(dev.fenceline.AtomicOp op) {
        return switch (op) {
            case ADD -> UctEndpoint.ADD;
            case AND -> UctEndpoint.AND;
            case OR -> UctEndpoint.OR;
            case XOR -> UctEndpoint.XOR;
            case SWAP -> UctEndpoint.SWAP;
        };
    }

    /** The caller holds the lane's lock. @return whether the operation left the queue */
    private boolean hardware(UcxLane lane, UcxOp op, UctRemoteKey rkey) {
        UctEndpoint ep = lane.channel.ep;
        UctIfaceAttributes a = lane.channel.iface.attributes();
        long r = rkey.value();
        long token = nextToken++;
        int n = op.payload();
        int status;
        switch (op.kind) {
            case PUT -> {
                keys.check(lane, op, Access.WRITE, n);
                long src = address(op, true);
                if (a.has(UctIfaceAttributes.PUT_SHORT) && n <= a.putMaxShort()) {
                    status = ep.putShort(src, n, op.remoteAddress, r);
                } else if (a.has(UctIfaceAttributes.PUT_BCOPY) && n <= a.putMaxBcopy()) {
                    status = ep.putBcopy(src, n, op.remoteAddress, r);
                } else {
                    status = ep.putZcopy(src, n, op.localMemoryHandle, op.remoteAddress, r, token);
                }
            }
            case GET -> {
                keys.check(lane, op, Access.READ, n);
                long dst = address(op, false);
                if (a.has(UctIfaceAttributes.GET_SHORT) && n <= a.getMaxShort()) {
                    status = ep.getShort(dst, n, op.remoteAddress, r);
                } else if (a.has(UctIfaceAttributes.GET_BCOPY) && n <= a.getMaxBcopy()) {
                    status = ep.getBcopy(dst, n, op.remoteAddress, r, token);
                } else {
                    status = ep.getZcopy(dst, n, op.localMemoryHandle, op.remoteAddress, r, token);
                }
            }
            case ATOMIC_POST -> {
                checkAtomic(lane, op);
                status = ep.atomicPost(atomicCode(op.atomicOp), op.width, op.operand, op.remoteAddress, r);
            }
            case ATOMIC_FETCH -> {
                checkAtomic(lane, op);
                status = ep.atomicFetch(atomicCode(op.atomicOp), op.width, op.operand, op.remoteAddress, r, token);
            }
            default -> {
                checkAtomic(lane, op);
                status = ep.compareAndSwap(op.width, op.compare, op.operand, op.remoteAddress, r, token);
            }
        }
        boolean inPlace = lane.channel.iface.completesInPlace();
        if (!inPlace && (status == UctStatus.OK || status == UctStatus.IN_PROGRESS)) {
            lane.traffic.unfenced = true;
        }
        if (status == UctStatus.OK && !inPlace && completesByFlush(op)) {
            unbounce(op, false); // UCT took its bytes
            op.state = UcxOp.State.POSTED;
            lane.traffic.hardwareInFlight++;
            lane.channel.hardwareInFlight++;
            flushes.await(lane, op);
            return true;
        }
        if (status == UctStatus.OK) {
            long value = op.kind == UcxOp.Kind.ATOMIC_FETCH || op.kind == UcxOp.Kind.CSWAP
                    ? signed(ep.result(), op.width) : 0;
            unbounce(op, true);
            completeLocked(lane, op, value);
            return true;
        }
        if (status == UctStatus.IN_PROGRESS) {
            op.state = UcxOp.State.POSTED; // a bounce buffer stays with it until it completes
            lane.traffic.hardwareInFlight++;
            lane.channel.hardwareInFlight++;
            inFlight.put(token, op);
            return true;
        }
        unbounce(op, false);
        if (status == UctStatus.NO_RESOURCE) {
            sender.noRoom(lane.channel);
            return false;
        }
        failLocked(lane, op, new FencelineException("ucx: UCT refused " + op.kind + " on " + lane + ": "
                + UctStatus.describe(status)));
        return true;
    }

    private void checkAtomic(UcxLane lane, UcxOp op) {
        if ((op.remoteAddress & (op.width - 1)) != 0) {
            throw new RemoteAccessException(RemoteAccessException.Reason.MISALIGNED, "ucx: address 0x"
                    + Long.toHexString(op.remoteAddress) + " is not aligned to " + op.width + " bytes");
        }
        keys.check(lane, op, Access.ATOMIC, op.width);
    }

    private static long signed(long value, int width) {
        return width == 4 ? (int) value : value;
    }

    /**
     * @param op an operation with a local buffer
     * @param out whether UCT reads from it (a put) rather than writes into it (a get)
     * @return its native address at its position; a heap buffer is stood in for by a bounce buffer
     *     the operation holds until UCT is done with it ({@link #unbounce})
     */
    private long address(UcxOp op, boolean out) {
        ByteBuffer b = op.local;
        if (b.isDirect()) {
            return BufferUtil.address(b) + b.position();
        }
        int n = b.remaining();
        op.bounce = bounces.take(n);
        if (out) {
            op.bounce.put(0, b, b.position(), n);
        }
        return BufferUtil.address(op.bounce);
    }

    /**
     * UCT is done with an operation's bounce buffer: a get's data goes to the endpoint's buffer (the
     * caller holds the lane's lock and knows the answer is wanted), and the bounce buffer goes back.
     *
     * @param op the operation
     * @param done whether it completed well (a get's data is there)
     */
    private void unbounce(UcxOp op, boolean done) {
        ByteBuffer b = op.bounce;
        if (b == null) {
            return;
        }
        op.bounce = null;
        if (done && op.kind == UcxOp.Kind.GET) {
            ByteBuffer sink = op.local;
            b.get(0, sink.array(), sink.arrayOffset() + sink.position(), sink.remaining());
        }
        bounces.give(b);
    }

    /**
     * A flush or keepalive probe at the head of the lane's queue: answered once everything before it
     * is (a software flush when requests are out, or always for a probe, where the lane carries
     * messages).
     *
     * @return whether it left the queue
     */
    private boolean flush(UcxLane lane, UcxOp op) {
        if (lane.traffic.hardwareInFlight > 0) {
            return false; // puts and atomic posts awaiting UCT's flush among them
        }
        boolean messages = lane.channel.iface.attributes().has(UctIfaceAttributes.AM_BCOPY);
        if (!messages || lane.traffic.softwareInFlight == 0 && op.kind == UcxOp.Kind.FLUSH) {
            lane.deliverFlushed(op.token);
            return true;
        }
        UcxSender.Sent s = requests.flush(lane, op.token);
        if (s == UcxSender.Sent.NO_ROOM) {
            return false;
        }
        if (s == UcxSender.Sent.SENT) {
            lane.traffic.softwareInFlight++;
            lane.traffic.flushesSent.addLong(op.token);
        }
        return true;
    }

    /**
     * @return whether UCT's completion of the operation says only that UCT took it, where it is not
     *     in place: a put or an atomic post is answered once a UCT flush after it completes; a get's
     *     or a fetch's answer is its data, there already
     */
    private static boolean completesByFlush(UcxOp op) {
        return op.kind == UcxOp.Kind.PUT || op.kind == UcxOp.Kind.ATOMIC_POST;
    }

    /**
     * Runs the UCT flushes that answer puts and atomic posts where UCT's completion is not in place
     * (twice a pass of the agent).
     */
    void flushAwaiting() {
        flushes.flushAwaiting();
    }

    /** @return a token for a hardware operation or UCT flush, which {@link #completed} is given back */
    long nextToken() {
        return nextToken++;
    }

    /** @param token a flush's token: UCT completes it later, with {@link #completed} */
    void flushInFlight(long token, UcxOp flush) {
        inFlight.put(token, flush);
    }

    private void completeLocked(UcxLane lane, UcxOp op, long value) {
        if (lane.answeredLocked(op.token) != null) {
            lane.deliverCompleted(op.token, value);
        }
    }

    private boolean fail(UcxLane lane, UcxOp op, FencelineException e) {
        synchronized (lane.ledger) {
            if (lane.ledger.sendable(op)) {
                failLocked(lane, op, e);
            }
        }
        failRefused();
        return true;
    }

    /** A posted operation refused before it left, and why: failed once the lane's lock is released. */
    private record Refused(UcxOp op, FencelineException error) {
    }

    /** Agent thread: posted operations refused under a lane's lock (their callbacks are the user's). */
    private final java.util.ArrayDeque<Refused> refused = new java.util.ArrayDeque<>();

    private void failLocked(UcxLane lane, UcxOp op, FencelineException e) {
        if (lane.answeredLocked(op.token) != null) {
            if (op.posted != null) {
                refused.add(new Refused(op, e)); // not applied; its caller's callbacks run outside the lock
            } else {
                lane.deliverFailed(op.token, e);
            }
        }
    }

    /** Fails the posted operations refused under the lock just released, in the order refused. */
    private void failRefused() {
        for (Refused r; (r = refused.poll()) != null;) {
            UcxLanePosting.postedAnswered(r.op(), 0, r.error());
        }
    }

    /**
     * Progresses UCT, for at most {@code nanos}, until the hardware operations it holds complete (the
     * transport closes); what else progress gathers is dropped.
     *
     * @return how many are still in flight
     */
    int completeHardware(UctWorker worker, long nanos) {
        long until = System.nanoTime() + nanos;
        UctEventHandler completionsOnly = new UctEventHandler() {
            @Override
            public void completed(long token, int status, long value) {
                UcxDataPath.this.completed(token, status, value);
            }

            @Override
            public void activeMessage(long iface, int id, DirectBuffer buffer, int offset, int length) {
            }

            @Override
            public void ready(long token) {
            }

            @Override
            public void endpointFailed(long endpoint, int status) {
            }
        };
        while (hardwareInFlight() > 0 && System.nanoTime() < until) {
            flushAwaiting();
            if (worker.progress() == 0) {
                Thread.yield(); // the transfer waits for its peer: not a core's worth of spinning
            }
            worker.drain(completionsOnly);
        }
        return hardwareInFlight();
    }

    /** @return hardware operations handed to UCT and not complete, and lanes awaiting a UCT flush */
    int hardwareInFlight() {
        return inFlight.size() + flushes.lanesWaiting();
    }

    /**
     * A hardware operation that was in flight completed.
     *
     * @param token the token UCT echoed
     * @param status how
     * @param value a fetched value
     */
    void completed(long token, int status, long value) {
        UcxOp op = inFlight.remove(token);
        if (op == null) {
            return; // a probe's, or one of a lane that was forgotten
        }
        UcxLane lane = op.lane;
        if (op == lane.traffic.uctFlush) {
            flushes.completed(lane, status);
            return;
        }
        if (status == UctStatus.OK && completesByFlush(op) && !lane.channel.iface.completesInPlace()) {
            unbounce(op, false);
            flushes.await(lane, op); // still counted in flight
            return;
        }
        lane.traffic.hardwareInFlight--;
        lane.channel.hardwareCompleted();
        synchronized (lane.ledger) {
            boolean wanted = lane.answeredLocked(op.token) != null;
            unbounce(op, wanted && status == UctStatus.OK); // a get's data only where its answer is owed
            if (wanted) {
                if (status == UctStatus.OK) {
                    lane.deliverCompleted(op.token, signed(value, op.width));
                } else {
                    lane.deliverFailed(op.token, new dev.fenceline.OutcomeUnknownException("ucx: UCT completed "
                            + op.kind + " on " + lane + " with " + UctStatus.describe(status)));
                }
            }
        }
        advance(lane);
        agent.answered(lane);
    }
}
