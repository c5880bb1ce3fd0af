package dev.fenceline.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import java.util.concurrent.TimeUnit;

/** Keepalive as arithmetic on times: no clock, no actor. */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class KeepaliveTest {
    private static final long S = 1_000_000_000L;
    private final Keepalive k = new Keepalive(1 * S, 5 * S);

    @Test
    void anIdleLaneIsProbedAfterTheIntervalAndNotBefore() {
        k.resize(2, 0);
        assertSame(Keepalive.Tick.QUIET, k.tick(S - 1, 0b11));
        Keepalive.Tick t = k.tick(S, 0b11);
        assertEquals(0b11, t.probes());
        assertEquals(-1, t.failed());
        assertTrue(k.probing(0) && k.probing(1));
        assertSame(Keepalive.Tick.QUIET, k.tick(2 * S, 0b11), "one probe at a time per lane");
    }

    @Test
    void aProbeUnansweredPastTheTimeoutFailsItsLaneAndLaterLanesWaitForTheNextTick() {
        k.resize(3, 0);
        k.tick(S, 0b011); // lanes 0 and 1 probed; lane 2 is not live
        k.heard(1, 3 * S);
        k.probeAnswered(1);
        Keepalive.Tick t = k.tick(6 * S + 1, 0b111);
        assertEquals(0, t.failed(), "lane 0's probe is overdue and nothing was heard");
        assertEquals(0, t.probes(), "lane 0 comes first: nothing after it was looked at");
        Keepalive.Tick next = k.tick(6 * S + 1, 0b110);
        assertEquals(0b110, next.probes(), "without lane 0, lanes 1 and 2 are idle long enough");
    }

    @Test
    void aSuspectedPeerIsProbedAtOnceAndItsSilentLaneFailsOneTimeoutLater() {
        k.resize(2, 0);
        k.heard(0, S / 2);
        k.heard(1, S / 2);
        assertSame(Keepalive.Tick.QUIET, k.tick(S / 2 + 1, 0b11), "heard from just now: not idle");
        k.suspect(S / 2 + 1);
        Keepalive.Tick t = k.tick(S / 2 + 1, 0b11);
        assertEquals(0b11, t.probes(), "probed now, not an interval later");
        k.heard(1, S);
        k.probeAnswered(1);
        assertEquals(-1, k.tick(5 * S + S / 2, 0b11).failed(), "not before the timeout");
        assertEquals(0, k.tick(5 * S + S / 2 + 2, 0b11).failed(), "lane 0 stayed silent past the timeout");
    }

    @Test
    void suspectingKeepsAProbeThatIsOutAlready() {
        k.resize(1, 0);
        k.tick(S, 1);
        k.suspect(3 * S);
        assertSame(Keepalive.Tick.QUIET, k.tick(3 * S, 1), "no second probe");
        assertEquals(-1, k.tick(6 * S, 1).failed(), "its deadline is the first probe's, not later, not earlier");
        assertEquals(0, k.tick(6 * S + 1, 1).failed());
    }

    @Test
    void hearingFromALaneKeepsItAliveWhileItsProbeIsOut() {
        k.resize(1, 0);
        k.tick(S, 1);
        k.heard(0, 5 * S);
        assertEquals(-1, k.tick(6 * S + 1, 1).failed(), "heard 1 s ago: not failed although the probe is late");
        assertEquals(0, k.tick(10 * S + 1, 1).failed());
    }

    @Test
    void aChangedSlotStartsAfresh() {
        k.resize(2, 0);
        k.tick(S, 0b11);
        k.reset(0b10, 4 * S);
        assertTrue(k.probing(0));
        assertFalse(k.probing(1));
        Keepalive.Tick t = k.tick(6 * S + 1, 0b11);
        assertEquals(0, t.failed());
        assertEquals(0, t.probes());
        assertEquals(-1, k.tick(6 * S + 1, 0b10).failed(), "slot 1 was heard from at 4 s");
    }

    @Test
    void newSlotsCountAsHeardFromWhenTheyAppear() {
        k.resize(1, 0);
        k.resize(2, 3 * S);
        assertEquals(0b01, k.tick(3 * S + 1, 0b11).probes());
        assertEquals(0b10, k.tick(4 * S, 0b11).probes());
        k.heard(7, 0); // out of range: ignored
        k.probeAnswered(-1);
    }
}
