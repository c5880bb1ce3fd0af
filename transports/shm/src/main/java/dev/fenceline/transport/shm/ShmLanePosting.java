package dev.fenceline.transport.shm;

import dev.fenceline.EndpointFailedException;
import dev.fenceline.spi.DirectAnswers;
import dev.fenceline.spi.PostStatus;
import dev.fenceline.spi.TransportOp;
import java.nio.ByteBuffer;
import org.agrona.concurrent.AtomicBuffer;
import org.agrona.concurrent.ringbuffer.ManyToOneRingBuffer;

/**
 * How a lane's messages enter the peer's inbox ring (the endpoint actor's operations and flush probes,
 * calling threads' direct active messages), each counted, claimed, written, committed and remembered in
 * one step under the lane's lock ({@link ShmLane#ledger}) so answers come in claim order; static, so
 * that an idle lane carries nothing for it.
 */
final class ShmLanePosting {
    private ShmLanePosting() {
    }

    /**
     * The peer's inbox takes messages from any thread in claim order, so a direct active message
     * keeps its place among the lane's other messages. The peer's answer comes back to the polling
     * thread, which reports it to {@code a} without the endpoint actor.
     */
    static boolean activeMessageNow(ShmLane lane, int id, ByteBuffer header, ByteBuffer payload, long origin,
            DirectAnswers a) {
        int h = header.remaining();
        int payloadBytes = h + payload.remaining();
        lane.checkMessage(payloadBytes);
        if (lane.answers == null) {
            lane.answers = a; // one endpoint per lane: always the same
        }
        synchronized (lane.ledger) {
            if (!lane.isLive() || lane.ledger.revoked() || !reserve(lane)) {
                return false;
            }
            ManyToOneRingBuffer ring = lane.peer.ring;
            int at = ring.tryClaim(ShmWire.AM, ShmWire.AM_DATA + payloadBytes);
            if (at < 0) {
                ShmLane.UNANSWERED.decrementAndGet(lane);
                return false; // full: the normal path waits for room
            }
            AtomicBuffer b = ring.buffer();
            long index;
            try {
                // No exactly-once number: see ShmLaneEnd.abandonDirect().
                ShmRecords.directActiveMessage(b, at, lane.conn, origin, id, header, h, payload);
            } catch (RuntimeException e) {
                ring.abort(at); // never leave a claimed record behind: it would block the peer's inbox
                ShmLane.UNANSWERED.decrementAndGet(lane);
                throw e;
            }
            // Numbered only now that nothing can stop it, and under the lock its answer takes too:
            // answers come back in this order.
            index = a.queued();
            ShmRecords.token(b, at, ShmLane.DIRECT | index);
            if (!commit(lane, ring, at)) {
                a.abandoned(1, new EndpointFailedException("shm: " + lane.peer.name + " skipped a direct"
                        + " active message this lane had half written: not run"));
                return true; // numbered, and answered as abandoned
            }
            lane.ledger.postedDirect(ShmLane.DIRECT | index);
            return true;
        }
    }

    /** Endpoint actor: an operation as a ring message, answered by the peer's polling thread. */
    static PostStatus send(ShmLane lane, TransportOp op) {
        int payload = lane.checked(op);
        int type;
        int length;
        switch (op.kind()) {
            case PUT -> {
                type = ShmWire.PUT;
                length = ShmWire.RMA_DATA + payload;
            }
            case GET -> {
                type = ShmWire.GET;
                length = ShmWire.GET_LENGTH + 4;
            }
            case AM -> {
                type = ShmWire.AM;
                length = ShmWire.AM_DATA + payload;
            }
            default -> {
                type = ShmWire.ATOMIC;
                length = ShmWire.ATOMIC_LENGTH;
            }
        }
        ShmMessageLedger ledger = lane.ledger;
        synchronized (ledger) { // claim order is the order answers come in
            if (ledger.revoked()) {
                ledger.neverSent(op.token());
                return PostStatus.IN_PROGRESS;
            }
            if (!reserve(lane)) {
                return PostStatus.NO_RESOURCE;
            }
            ManyToOneRingBuffer ring = lane.peer.ring;
            int at = ring.tryClaim(type, length);
            if (at < 0) {
                ShmLane.UNANSWERED.decrementAndGet(lane);
                lane.needRoom(); // the peer's ring is full; the polling thread says when it has room
                return PostStatus.NO_RESOURCE;
            }
            try {
                // The ledger learns of an active message before its body is written and of a get
                // after; the catch below forgets either.
                AtomicBuffer b = ring.buffer();
                ShmRecords.prefix(b, at, lane.conn, op);
                if (op.kind() == TransportOp.Kind.AM) {
                    ledger.activeMessageSent(op.token());
                }
                ShmRecords.body(b, at, op, payload);
                if (op.kind() == TransportOp.Kind.GET) {
                    ledger.getSent(op.token(), op.local());
                }
            } catch (RuntimeException e) {
                ring.abort(at); // never leave a claimed record behind: it would block the peer's inbox
                ShmLane.UNANSWERED.decrementAndGet(lane);
                ledger.writeFailed(op.token());
                throw e;
            }
            if (commit(lane, ring, at)) {
                ledger.posted(op.token());
            } else {
                ledger.neverSent(op.token()); // skipped by the peer, never applied; the lane fails
            }
        }
        return PostStatus.IN_PROGRESS;
    }

    /** Endpoint actor: a flush probe through the ring, answered after every message before it. */
    static PostStatus probe(ShmLane lane, long token) {
        ShmMessageLedger ledger = lane.ledger;
        synchronized (ledger) {
            if (ledger.revoked()) {
                return PostStatus.IN_PROGRESS;
            }
            if (!reserve(lane)) {
                return PostStatus.NO_RESOURCE;
            }
            ManyToOneRingBuffer ring = lane.peer.ring;
            int at = ring.tryClaim(ShmWire.FLUSH, 16);
            if (at < 0) {
                ShmLane.UNANSWERED.decrementAndGet(lane);
                lane.needRoom();
                return PostStatus.NO_RESOURCE;
            }
            ShmRecords.flush(ring.buffer(), at, lane.conn, token);
            if (commit(lane, ring, at)) {
                ledger.posted(token);
            }
        }
        return PostStatus.IN_PROGRESS;
    }

    /**
     * Commits a claimed record.
     *
     * @return false if the peer skipped it meanwhile (it took this process for dead, or a record of
     *     it for abandoned): then the lane fails, with the reason
     */
    private static boolean commit(ShmLane lane, ManyToOneRingBuffer ring, int at) {
        try {
            ring.commit(at);
            lane.peer.doorbell.ring();
            return true;
        } catch (IllegalStateException skipped) {
            ShmLane.UNANSWERED.decrementAndGet(lane);
            lane.fail(new EndpointFailedException("shm: " + lane.peer.name + " skipped a message this lane had"
                    + " half written (" + skipped.getMessage() + "); the lane is not usable"));
            return false;
        }
    }

    /** Counts one more unanswered ring message, or says there is no room (caller holds the lane's lock). */
    private static boolean reserve(ShmLane lane) {
        if (ShmLane.UNANSWERED.incrementAndGet(lane) <= lane.queueDepth) {
            return true;
        }
        ShmLane.UNANSWERED.decrementAndGet(lane);
        lane.needRoom();
        return false;
    }
}
