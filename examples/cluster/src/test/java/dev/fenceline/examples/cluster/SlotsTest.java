package dev.fenceline.examples.cluster;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;

/** The table's arithmetic and the replica checks, without a cluster. */
class SlotsTest {
    @Test
    void aValueSaysWhoWroteWhichKeyAndWhichWrite() {
        long v = Slots.value(2, 513, 70_000);
        assertEquals(2, Slots.writer(v));
        assertEquals(513, Slots.key(v));
        assertEquals(70_000, Slots.write(v));
        assertThrows(IllegalArgumentException.class, () -> Slots.value(0, 0, 0), "writes count from 1");
        assertThrows(IllegalArgumentException.class, () -> Slots.value(0, 1 << 16, 1));
    }

    @Test
    void anAcknowledgedKeyMustHoldExactlyItsWrites() {
        assertNull(Slots.checkAcknowledged(4, 1, 3, 3, Slots.value(1, 4, 3)));
        assertNull(Slots.checkAcknowledged(4, 1, 0, 0, 0));
        assertTrue(Slots.checkAcknowledged(4, 1, 3, 4, Slots.value(1, 4, 3)).contains("applied twice"));
        assertTrue(Slots.checkAcknowledged(4, 1, 3, 2, Slots.value(1, 4, 3)).contains("lost"));
        assertTrue(Slots.checkAcknowledged(4, 1, 3, 3, Slots.value(1, 4, 2)).contains("expected write 3"));
    }

    @Test
    void anInterruptedKeyHoldsTheCountedWriteOrTheOneAfter() {
        assertNull(Slots.checkInterrupted(5, 2, 0, 0), "never written");
        assertNull(Slots.checkInterrupted(5, 2, 0, Slots.value(2, 5, 1)), "the first put landed, its ADD did not");
        assertNull(Slots.checkInterrupted(5, 2, 7, Slots.value(2, 5, 7)));
        assertNull(Slots.checkInterrupted(5, 2, 7, Slots.value(2, 5, 8)));
        assertTrue(Slots.checkInterrupted(5, 2, 7, Slots.value(2, 5, 9)).contains("lost"));
        assertTrue(Slots.checkInterrupted(5, 2, 7, Slots.value(2, 5, 6)).contains("twice"));
        assertTrue(Slots.checkInterrupted(5, 2, 1, 0).contains("without a value"));
        assertTrue(Slots.checkInterrupted(5, 2, 1, Slots.value(1, 5, 1)).contains("not written by member 2"));
    }
}
