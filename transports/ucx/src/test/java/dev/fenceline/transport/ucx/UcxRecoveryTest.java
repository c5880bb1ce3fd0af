package dev.fenceline.transport.ucx;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.fenceline.spi.support.ReconnectPolicy;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * The reconnect schedule of failed lanes, on virtual time with a recording dialer: the first attempt
 * after the policy's delay, one attempt at a time, an attempt that takes longer than the timeout
 * dropped and the next one later, give-up, and nothing more for a lane its endpoint closed or whose
 * peer is gone.
 */
class UcxRecoveryTest {
    private static final long MS = 1_000_000L;
    private static final ReconnectPolicy POLICY = new ReconnectPolicy(Duration.ofMillis(100), Duration.ofMillis(400),
            Duration.ofSeconds(2), Duration.ofSeconds(5));

    /** A lane as recovery sees it. */
    private static final class Lane implements UcxRecovery.Recoverable {
        boolean wanted = true;
        boolean gone;
        ReconnectPolicy.Backoff series;
        long upSince;

        @Override
        public boolean wantsRecovery() {
            return wanted;
        }

        @Override
        public boolean peerGone() {
            return gone;
        }

        @Override
        public ReconnectPolicy.Backoff lastBackoff() {
            return series;
        }

        @Override
        public long upSince() {
            return upSince;
        }

        @Override
        public void upAgain(ReconnectPolicy.Backoff s, long now) {
            series = s;
            upSince = now;
        }
    }

    private long now;
    private final List<String> calls = new ArrayList<>();
    private long nextDial = 1;
    private boolean refuse;
    private final UcxRecovery<Lane> recovery = new UcxRecovery<>("w", POLICY, 1000 * MS, () -> now,
            () -> -1L, new UcxRecovery.Dialer<>() { // the jitter's upper end: the full delay
                @Override
                public long redial(Lane old) {
                    calls.add("redial@" + now / MS);
                    return refuse ? 0 : nextDial++;
                }

                @Override
                public void abandon(long dial) {
                    calls.add("abandon " + dial + "@" + now / MS);
                }
            });

    private void runUntil(long ms) {
        while (now < ms * MS) {
            now += 10 * MS; // the actor's tick
            recovery.tick();
        }
    }

    @Test
    void attemptsFollowTheBackoffOneAtATimeAndATimedOutOneIsDropped() {
        Lane lane = new Lane();
        lane.upSince = -60_000 * MS; // up for a minute: a fresh series
        recovery.lost(lane);
        runUntil(50);
        assertEquals(List.of(), calls, "nothing before the first delay");
        runUntil(100);
        assertEquals(List.of("redial@100"), calls);
        runUntil(1100); // one attempt at a time: none until it times out (1 s)
        assertEquals(List.of("redial@100"), calls);
        runUntil(1110);
        assertEquals(List.of("redial@100", "abandon 1@1110"), calls);
        runUntil(1400); // then the doubled delay, 200 ms
        assertEquals(List.of("redial@100", "abandon 1@1110", "redial@1310"), calls);
        recovery.failed(lane, "refused"); // at 1400
        runUntil(1790);
        assertEquals(3, calls.size(), calls.toString());
        runUntil(1800); // 400 ms after the refusal
        assertEquals("redial@1800", calls.get(calls.size() - 1), calls.toString());
        Lane next = new Lane();
        assertTrue(recovery.succeeded(lane, next));
        assertEquals(1800 * MS, next.upSince());
        assertEquals(0, recovery.size());
        runUntil(5000);
        assertEquals(4, calls.size(), "nothing more once it came up: " + calls);
    }

    @Test
    void reconnectingStopsAfterGiveUpAfter() {
        Lane lane = new Lane();
        lane.upSince = -60_000 * MS;
        refuse = true; // no attempt can start (the path is down)
        recovery.lost(lane);
        runUntil(1900);
        assertEquals(1, recovery.size());
        runUntil(3000);
        assertEquals(0, recovery.size(), "given up after 2 s: " + calls);
        int attempts = calls.size();
        runUntil(6000);
        assertEquals(attempts, calls.size());
    }

    @Test
    void aLaneItsEndpointClosedOrWhosePeerIsGoneIsNotReconnected() {
        Lane closed = new Lane();
        Lane orphan = new Lane();
        recovery.lost(closed);
        recovery.lost(orphan);
        runUntil(100);
        assertEquals(2, calls.size(), calls.toString());
        closed.wanted = false;
        orphan.gone = true;
        runUntil(110);
        assertEquals(List.of("redial@100", "redial@100", "abandon 1@110", "abandon 2@110"), calls);
        assertEquals(0, recovery.size());
        assertFalse(recovery.succeeded(closed, new Lane()), "an attempt that comes up after the close is not used");
        Lane never = new Lane();
        never.wanted = false;
        recovery.lost(never);
        assertEquals(0, recovery.size(), "a lane the endpoint closed is not reconnected at all");
    }

    @Test
    void aLaneThatFailsSoonAfterItCameUpKeepsItsBackoff() {
        Lane lane = new Lane();
        lane.series = new ReconnectPolicy.Backoff(0, 400 * MS); // came up from a long series...
        lane.upSince = 0;
        now = 1000 * MS; // ...and failed a second later, before stable-after
        recovery.lost(lane);
        runUntil(1390);
        assertEquals(List.of(), calls, "the series' delay, 400 ms, not the first 100 ms");
        runUntil(1400);
        assertEquals(List.of("redial@1400"), calls);
    }
}
