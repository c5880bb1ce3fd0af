package dev.fenceline.transport.tcp;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.netty.channel.Channel;
import io.netty.channel.embedded.EmbeddedChannel;
import org.junit.jupiter.api.Test;

/**
 * At most a bound of connections handshake at once; a new one pushes out the oldest of the address
 * with the most handshaking.
 */
class HandshakingTest {
    @Test
    void aNewConnectionOverTheBoundPushesTheOldestOutAndADoneOneLeaves() {
        Handshaking h = new Handshaking(2);
        Channel a = new EmbeddedChannel();
        Channel b = new EmbeddedChannel();
        Channel c = new EmbeddedChannel();
        Channel d = new EmbeddedChannel();
        assertNull(h.admit(a, "x"));
        assertNull(h.admit(b, "x"));
        assertSame(a, h.admit(c, "x"), "the oldest goes");
        assertTrue(h.done(b), "authenticated while still counted");
        assertNull(h.admit(d, "x"), "room again");
        assertSame(c, h.admit(new EmbeddedChannel(), "x"), "the oldest still waiting");
        assertEquals(2, h.size());
        assertFalse(h.done(a), "pushed out: it must not be welcomed");
        assertEquals(2, h.size());
        assertSame(d, h.pushOut(), "full in all: the oldest gives way");
        assertEquals(1, h.size());
    }

    @Test
    void aFloodFromOneAddressPushesOutItsOwnBeforeAnotherAddressesHandshake() {
        Handshaking h = new Handshaking(3);
        Channel peer = new EmbeddedChannel();
        assertNull(h.admit(peer, "10.0.0.2"));
        Channel[] flood = new Channel[10];
        for (int i = 0; i < flood.length; i++) {
            flood[i] = new EmbeddedChannel();
            Channel out = h.admit(flood[i], "10.0.0.66");
            if (i < 2) {
                assertNull(out, "room for " + i);
            } else {
                assertSame(flood[i - 2], out, "the flooding address's oldest, not the older peer's (" + i + ")");
            }
        }
        assertTrue(h.done(peer), "the peer's handshake completes: it was never pushed out");
        assertEquals(2, h.size());
        Channel second = new EmbeddedChannel();
        Channel third = new EmbeddedChannel();
        assertNull(h.admit(second, "10.0.0.3"));
        assertSame(flood[8], h.admit(third, "10.0.0.3"), "two each: the oldest of the two goes");
        assertSame(second, h.pushOut(), "then the address with two");
        assertSame(flood[9], h.pushOut(), "then one each: the oldest first");
        assertSame(third, h.pushOut());
        assertNull(h.pushOut(), "none left");
        assertEquals(0, h.size());
    }
}
