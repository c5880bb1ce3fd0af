package dev.fenceline.transport.ucx;

import java.util.ArrayDeque;
import org.agrona.collections.LongArrayQueue;

/**
 * A lane's operations on their way through the progress agent, after the agent took them from its
 * queue: those not yet handed to UCT, and the counts that keep the lane's two paths in post order
 * (hardware operations wait while software requests are unanswered, and the other way round), with
 * what waits for a UCT flush or fence. Progress agent only.
 */
final class UcxLaneTraffic {
    /** Operations the agent took from its queue and has not handed to UCT yet, in post order. */
    final ArrayDeque<UcxOp> waiting = new ArrayDeque<>();
    /** Software requests sent and not answered. */
    int softwareInFlight;
    /** A hardware operation waits for the software answers before it, and the target was asked for them. */
    boolean expedited;
    /** Hardware operations handed to UCT and not complete. */
    int hardwareInFlight;
    /**
     * Puts and atomic posts UCT completed on an iface whose completions are not in place
     * ({@link UctIface#completesInPlace()}): each is answered when a UCT flush after it completes
     * (counted in {@link #hardwareInFlight} until then), in order.
     */
    final ArrayDeque<UcxOp> awaitingFlush = new ArrayDeque<>();
    /** Of {@link #awaitingFlush}, how many the UCT flush in flight answers (0: none in flight). */
    int coveredByFlush;
    /** Whether the data path has the lane on its list of lanes whose awaiting operations want a UCT flush. */
    boolean wantsFlush;
    /** Stands for the lane's UCT flush in the data path's table of operations in flight. */
    final UcxOp uctFlush;
    /** Hardware operations were handed to UCT since its last fence of the lane (such an iface only). */
    boolean unfenced;
    /**
     * The tokens of the software flushes and keepalive probes sent and not answered, oldest first:
     * the target answers a lane's requests in the order they came.
     */
    final LongArrayQueue flushesSent = new LongArrayQueue(Long.MIN_VALUE);

    /** A reply answered one of the software requests in flight. */
    void replied() {
        if (softwareInFlight > 0) {
            softwareInFlight--;
        }
    }

    /**
     * A FLUSHED reply came.
     *
     * @param token the token it names
     * @return whether it answers the oldest flush sent and unanswered (then that one is answered);
     *     else the reply is not the target's to send
     */
    boolean flushAnswered(long token) {
        if (flushesSent.isEmpty() || flushesSent.peekLong() != token) {
            return false;
        }
        flushesSent.pollLong();
        replied();
        return true;
    }

    /** @param lane the lane */
    UcxLaneTraffic(UcxLane lane) {
        this.uctFlush = UcxOp.flush(lane, 0, false);
    }
}
