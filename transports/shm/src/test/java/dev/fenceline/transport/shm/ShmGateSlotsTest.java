package dev.fenceline.transport.shm;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.fenceline.EndpointFailedException;
import java.nio.ByteBuffer;
import java.util.concurrent.atomic.AtomicBoolean;
import org.agrona.concurrent.UnsafeBuffer;
import org.junit.jupiter.api.Test;

/**
 * A closed lane's gate slot is reused once its peer left the gate, or once the peer's process
 * ended: a peer killed while inside (mid-record, in a long handler) never leaves, and its slot was
 * lost for good, until max-lanes was reached.
 */
class ShmGateSlotsTest {
    private final Gates gates = new Gates(new UnsafeBuffer(ByteBuffer.allocateDirect(Gates.SLOT)));
    private final ShmGateSlots slots = new ShmGateSlots(gates, "w", 1);

    @Test
    void aSlotIsReusedOnceItsPeerLeftTheGate() {
        int slot = slots.open(1);
        assertTrue(gates.enter(slot, 1), "the peer is inside");
        gates.revoke(slot);
        slots.release(slot, () -> true);
        slots.releaseLeft();
        assertThrows(EndpointFailedException.class, () -> slots.open(2), "still inside: not reused");
        gates.leave(slot);
        slots.releaseLeft();
        assertEquals(slot, slots.open(2));
    }

    @Test
    void aSlotIsReusedOnceItsPeerProcessEndedInsideTheGate() {
        int slot = slots.open(1);
        assertTrue(gates.enter(slot, 1));
        gates.revoke(slot);
        AtomicBoolean alive = new AtomicBoolean(true);
        slots.release(slot, alive::get);
        slots.releaseLeft();
        assertThrows(EndpointFailedException.class, () -> slots.open(2));
        alive.set(false); // killed inside: it never leaves
        slots.releaseLeft();
        assertEquals(slot, slots.open(2), "its slot is free again");
        assertTrue(gates.enter(slot, 2), "and its gate opens for the new connection");
    }
}
