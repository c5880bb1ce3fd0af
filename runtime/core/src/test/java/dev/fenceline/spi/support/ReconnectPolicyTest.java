package dev.fenceline.spi.support;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;

/** The reconnect arithmetic, apart from the rail actor. */
class ReconnectPolicyTest {
    private static final long MS = 1_000_000L;
    private final ReconnectPolicy policy = new ReconnectPolicy(Duration.ofMillis(100), Duration.ofMillis(2_000),
            Duration.ofSeconds(60), Duration.ofSeconds(5));

    @Test
    void aFirstLossStartsAtTheMinimumDelay() {
        ReconnectPolicy.Backoff b = policy.lost(null, 1_000 * MS, 0);
        assertEquals(new ReconnectPolicy.Backoff(1_000 * MS, 100 * MS), b);
    }

    @Test
    void eachFailedAttemptDoublesTheDelayUpToTheMaximum() {
        ReconnectPolicy.Backoff b = policy.lost(null, 0, 0);
        long[] expected = {200, 400, 800, 1_600, 2_000, 2_000};
        for (long e : expected) {
            b = policy.failed(b, 10 * MS);
            assertEquals(e * MS, b.delayNanos());
            assertEquals(0, b.failedAt(), "the give-up clock runs from the loss that started the series");
        }
    }

    @Test
    void reconnectingStopsOnceTheGiveUpTimePassed() {
        ReconnectPolicy.Backoff b = policy.lost(null, 0, 0);
        assertEquals(200 * MS, policy.failed(b, 60_000 * MS).delayNanos(), "at the bound itself it goes on");
        assertNull(policy.failed(b, 60_000 * MS + 1));
    }

    @Test
    void aConnectionThatDiedSoonAfterItCameUpKeepsTheSeriesBeforeIt() {
        ReconnectPolicy.Backoff grown = new ReconnectPolicy.Backoff(0, 1_600 * MS);
        assertSame(grown, policy.lost(grown, 10_000 * MS, 10_000 * MS - 4_999 * MS), "flapping: no fresh start");
        ReconnectPolicy.Backoff fresh = policy.lost(grown, 10_000 * MS, 10_000 * MS - 5_000 * MS);
        assertEquals(new ReconnectPolicy.Backoff(10_000 * MS, 100 * MS), fresh, "stable for 5 s: a new series");
    }

    @Test
    void jitterDrawsFromTheUpperHalfOfTheDelay() {
        long seed = 20261201L;
        SplittableRandom random = new SplittableRandom(seed);
        ReconnectPolicy.Backoff b = new ReconnectPolicy.Backoff(0, 1_000);
        long min = Long.MAX_VALUE;
        long max = Long.MIN_VALUE;
        for (int i = 0; i < 100_000; i++) {
            long d = ReconnectPolicy.jittered(b, random.nextLong());
            assertTrue(d >= 500 && d <= 1_000, "seed " + seed + ": " + d);
            min = Math.min(min, d);
            max = Math.max(max, d);
        }
        assertEquals(500, min, "seed " + seed);
        assertEquals(1_000, max, "seed " + seed);
    }
}
