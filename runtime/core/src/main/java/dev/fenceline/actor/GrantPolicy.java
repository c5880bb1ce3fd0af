package dev.fenceline.actor;

import dev.fenceline.LaneType;
import dev.fenceline.internal.LaneTable;
import dev.fenceline.internal.OpClass;
import dev.fenceline.spi.DirectAccess;
import dev.fenceline.spi.DirectPosting;
import dev.fenceline.spi.LaneConnection;

/**
 * When calling threads may act on a lane themselves (the fast path by grant, docs/architecture.md): only while
 * nothing of the endpoint is outstanding (no request, fence, flush, parked work or replay), and only
 * on one lane that can act directly and carries both short RMA and atomics. Any submission voids the
 * grant (its stamp), so a thread's direct operation never passes anything it submitted before. On a
 * {@link DirectAccess} lane a direct operation is complete and visible on return, so fences and
 * flushes need nothing from it; on a {@link DirectPosting} lane it is answered later, counted by the
 * direct ledger (flushes wait for it), and the actor takes no submission until every posted
 * operation is answered or taken back. A lane may be both: a direct try it declines (memory it does
 * not reach) is then posted there.
 * Owned by the endpoint actor.
 */
final class GrantPolicy {
    private final LaneSlots slots;
    private final EndpointChannel channel;
    private final boolean failover;
    /** The lane (and its connection) of the last grant that took active messages, or -1. */
    private int messageLane = -1;
    private long messageConnection;

    /**
     * @param slots the lane table and its selection
     * @param channel where the grant is published
     * @param failover whether a lane failure is hidden while another lane lives (error mode failover)
     */
    GrantPolicy(LaneSlots slots, EndpointChannel channel, boolean failover) {
        this.slots = slots;
        this.channel = channel;
        this.failover = failover;
    }

    /**
     * A direct active message lives only in the peer's queue: if its lane fails before the peer takes
     * it, it can be reported not run, but not sent again. So where a failover could move active
     * messages to another lane (a standby lane of a later transport, another rail), they take the
     * actor's path, which keeps each message until it is answered and re-sends it.
     */
    private boolean standbyForMessages(int lane) {
        if (!failover) {
            return false;
        }
        LaneTable t = slots.table();
        for (int i = 0; i < t.size(); i++) {
            if (i != lane && t.hasType(i, LaneType.AM)) {
                return true;
            }
        }
        return false;
    }

    /**
     * Publishes a grant, or revokes it.
     *
     * @param idle whether nothing of the endpoint is outstanding at the actor
     */
    void update(boolean idle) {
        if (channel.isClosing() || !idle || slots.anyParked()) {
            channel.grant().revoke();
            return;
        }
        int[] rma = slots.candidates(OpClass.RMA_SHORT);
        int[] amo = slots.candidates(OpClass.ATOMIC);
        LaneConnection single = rma.length == 1 && amo.length == 1 && rma[0] == amo[0]
                ? slots.table().connection(rma[0]) : null;
        DirectAccess direct = single instanceof DirectAccess d ? d : null;
        int slot = direct != null ? rma[0] : postingSlot(rma, amo);
        if (slot < 0) {
            channel.grant().revoke();
            return;
        }
        LaneConnection lane = slots.table().connection(slot);
        // A lane may do both: act on memory it reaches, and take the rest posted (its direct tries
        // decline what it cannot reach, and the caller posts that instead).
        DirectPosting posting = direct == null ? (DirectPosting) lane
                : lane instanceof DirectPosting p && p.postsDirectly() ? p : null;
        int[] am = slots.candidates(OpClass.ACTIVE_MESSAGE);
        // Active messages are ordered per lane: direct ones only on the lane the others take.
        boolean messages = direct != null && am.length == 1 && am[0] == slot && !standbyForMessages(slot);
        boolean counted = messages || posting != null; // answers the direct ledger counts come from this lane
        if (lane.id() != messageConnection
                && (!channel.direct().settled() || !channel.direct().postingSettledOrWake())) {
            // Direct operations still out on another lane, or a calling thread between its look at
            // the old grant and its count of what it sends there. Their answers and this lane's
            // would interleave, and a flush counts answers; and a caller's fence never reaches the
            // actor, so an operation done here could pass one posted there before the fence. Grant
            // again once they are in (the last posted one's end wakes the actor).
            channel.grant().revoke();
            channel.direct().answeredOrWake(channel.direct().sent());
            return;
        }
        if (counted) {
            messageLane = slot;
            messageConnection = lane.id();
        }
        if (counted) { // the lane whose answers a flush waits for: asked for any its target holds back
            channel.direct().answersFrom(lane instanceof DirectAccess d ? d : null);
        }
        channel.grant().publish(direct, posting, slot, messages);
    }

    /**
     * The lane calling threads post on: the first that carries both short RMA and atomics and takes
     * posted operations. Where several rails carry them, idle-time operations all go to that one
     * (ordered among themselves by its connection); the actor spreads the rest as before.
     *
     * @return its slot, or -1
     */
    private int postingSlot(int[] rma, int[] amo) {
        for (int i : rma) {
            for (int j : amo) {
                if (i == j && slots.table().connection(i) instanceof DirectPosting p && p.postsDirectly()) {
                    return i;
                }
            }
        }
        return -1;
    }

    /** @return the slot whose connection carried the last granted active messages, or -1 */
    int messageLane() {
        return messageLane;
    }

    /** @return that connection's id */
    long messageConnection() {
        return messageConnection;
    }
}
