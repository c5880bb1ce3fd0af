package dev.fenceline.transport.shm;

import dev.fenceline.EndpointFailedException;
import java.util.concurrent.ConcurrentLinkedQueue;

/**
 * The origin side's gate slots ({@link Gates}): one per ring lane, taken at dial and given back at
 * close. A slot whose peer is still inside the gate (a stopped peer may be, mid-record) is not
 * reused until it left: such slots wait here and are tried again at each housekeeping.
 */
final class ShmGateSlots {
    private final Gates gates;
    private final SlotPool pool;
    /** A closed lane's slot the peer was still inside, and whether that peer is still taken to run. */
    private record Left(int slot, java.util.function.BooleanSupplier peerAlive) {
    }

    /** Closed lanes' slots the peer was still inside, to free once it left or its process ended. */
    private final ConcurrentLinkedQueue<Left> left = new ConcurrentLinkedQueue<>();
    private final String workerName;
    private final int maxLanes;

    /**
     * @param gates this worker's gates, in its control segment
     * @param workerName the worker's name, for the error
     * @param maxLanes the setting that bounds them, for the error
     */
    ShmGateSlots(Gates gates, String workerName, int maxLanes) {
        this.gates = gates;
        this.pool = new SlotPool(gates.slots());
        this.workerName = workerName;
        this.maxLanes = maxLanes;
    }

    /**
     * @param conn the connection the slot's gate opens for
     * @return the slot
     * @throws EndpointFailedException if every slot is taken
     */
    int open(long conn) {
        int slot = pool.take();
        if (slot < 0) {
            throw new EndpointFailedException("shm: worker '" + workerName + "' has " + maxLanes
                    + " ring lanes open, the most " + ShmSettings.SECTION + ".max-lanes allows");
        }
        gates.open(slot, conn);
        return slot;
    }

    /**
     * Frees a closed lane's gate once the peer is not inside it (a stopped peer may be), or its
     * process ended: one killed inside never leaves, and the slot would be lost for good.
     *
     * @param slot the lane's slot, revoked
     * @param peerAlive whether the peer is still taken to run (asked at housekeeping): false once the
     *     transport found its process gone
     */
    void release(int slot, java.util.function.BooleanSupplier peerAlive) {
        if (gates.busy(slot)) {
            left.add(new Left(slot, peerAlive));
            return;
        }
        pool.release(slot);
    }

    /** Housekeeping: the slots peers were inside are tried again (back on the list if still so). */
    void releaseLeft() {
        for (int n = left.size(); n > 0; n--) {
            Left l = left.poll();
            if (l == null) {
                break;
            }
            if (gates.busy(l.slot()) && l.peerAlive().getAsBoolean()) {
                left.add(l);
            } else {
                pool.release(l.slot()); // opened again, its words are written afresh (Gates#open)
            }
        }
    }
}
