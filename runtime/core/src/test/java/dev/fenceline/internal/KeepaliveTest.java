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
    void whileTheEndpointIsQuietItsLanesAreProbedAfterTheIdleIntervalOnly() {
        Keepalive idle = new Keepalive(1 * S, 10 * S, 5 * S);
        idle.resize(2, 0);
        assertSame(Keepalive.Tick.QUIET, idle.tick(S, 0b11, true), "quiet: the interval is not enough");
        assertSame(Keepalive.Tick.QUIET, idle.tick(10 * S - 1, 0b11, true));
        assertEquals(0b11, idle.tick(10 * S, 0b11, true).probes());
        idle.heard(0, 10 * S + 1);
        idle.probeAnswered(0);
        assertEquals(-1, idle.tick(15 * S, 0b11, true).failed(), "lane 0 answered; lane 1 not yet overdue");
        assertEquals(1, idle.tick(15 * S + 1, 0b11, true).failed(), "a quiet lane's probe still has the timeout");
    }

    @Test
    void workWaitingOnAQuietEndpointGetsItsSilentLanesProbedAtTheNextTick() {
        Keepalive idle = new Keepalive(1 * S, 10 * S, 5 * S);
        idle.resize(2, 0);
        idle.heard(1, 3 * S);
        assertSame(Keepalive.Tick.QUIET, idle.tick(3 * S, 0b11, true));
        Keepalive.Tick busy = idle.tick(3 * S + 1, 0b11, false);
        assertEquals(0b01, busy.probes(), "lane 0 unheard for 3 s: probed at once; lane 1 heard just now");
        assertEquals(0b10, idle.tick(4 * S, 0b11, false).probes(), "lane 1 after the (busy) interval");
    }

    @Test
    void aQuietEndpointsNextTickIsDueWhenItsFirstLaneIsDueAProbeOrItsProbeIsOverdue() {
        Keepalive idle = new Keepalive(1 * S, 10 * S, 5 * S);
        idle.resize(3, 0);
        idle.heard(0, 2 * S);
        idle.heard(1, 4 * S);
        assertEquals(10 * S, idle.nextQuietDue(0b111), "lane 2, unheard since 0, is due a probe at 10 s");
        assertEquals(12 * S, idle.nextQuietDue(0b011), "lane 2 not live: lane 0 at 2 + 10 s");
        assertSame(Keepalive.Tick.QUIET, idle.tick(10 * S - 1, 0b011, true), "nothing before it is due");
        assertEquals(0b100, idle.tick(10 * S, 0b111, true).probes());
        assertEquals(12 * S, idle.nextQuietDue(0b111), "lane 0 comes before lane 2's probe deadline (15 s)");
        idle.heard(0, 12 * S);
        idle.heard(1, 12 * S);
        assertEquals(15 * S + 1, idle.nextQuietDue(0b111), "the first time lane 2's probe is overdue");
        assertEquals(-1, idle.tick(15 * S, 0b111, true).failed());
        assertEquals(2, idle.tick(15 * S + 1, 0b111, true).failed());
        assertEquals(Long.MAX_VALUE, idle.nextQuietDue(0), "no live lane: never");
    }

    @Test
    void anIdleIntervalShorterThanTheIntervalIsTheInterval() {
        Keepalive odd = new Keepalive(2 * S, S, 5 * S);
        odd.resize(1, 0);
        assertSame(Keepalive.Tick.QUIET, odd.tick(2 * S - 1, 1, true));
        assertEquals(1, odd.tick(2 * S, 1, true).probes());
    }

    @Test
    void aSuspectedPeerOfAQuietEndpointIsProbedAtOnce() {
        Keepalive idle = new Keepalive(1 * S, 10 * S, 5 * S);
        idle.resize(1, 0);
        idle.heard(0, 20 * S);
        idle.suspect(20 * S + 1);
        assertEquals(1, idle.tick(20 * S + 1, 1, true).probes(), "not an idle interval later");
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
