package dev.fenceline.perf;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;

import org.junit.jupiter.api.Test;

/**
 * The schedule the waiting loops look at the clock by ({@link PollingWait#clockDue}): one turn in 256,
 * never in the first spins. That the loops follow it is read in PerfRunner and PollingWait, not tested here.
 */
class PollingWaitTest {
    @Test
    void theClockIsDueOnceEvery256TurnsAndNeverInTheFirstSpins() {
        for (int spins = 0; spins < 255; spins++) {
            assertFalse(PollingWait.clockDue(spins), "turn " + spins);
        }
        int due = 0;
        for (int spins = 0; spins < 256 * 1000; spins++) {
            due += PollingWait.clockDue(spins) ? 1 : 0;
        }
        assertEquals(1000, due);
        int wrapped = 0; // a wait past Integer.MAX_VALUE turns still looks at its deadline
        for (int spins = Integer.MAX_VALUE - 511; spins != Integer.MIN_VALUE + 512; spins++) {
            wrapped += PollingWait.clockDue(spins) ? 1 : 0;
        }
        assertEquals(4, wrapped);
    }
}
