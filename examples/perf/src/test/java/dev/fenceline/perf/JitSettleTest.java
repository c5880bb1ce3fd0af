package dev.fenceline.perf;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;

/** The wait for quiet compilers: none when turned off, at least the quiet period, never far past its bound. */
class JitSettleTest {
    @Test
    void waitsForTheQuietPeriodWithinItsBound() throws InterruptedException {
        assertEquals(0, JitSettle.await(0), "0 turns the wait off");
        long waited = JitSettle.await(400);
        assertTrue(waited >= JitSettle.QUIET_MS, "quiet at least " + JitSettle.QUIET_MS + " ms: waited " + waited);
        assertTrue(waited < 400 + 1000, "bounded by its 400 ms (with a scheduler's slack): waited " + waited);
    }
}
