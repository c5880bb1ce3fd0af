package dev.fenceline.transport.tcp;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.netty.channel.Channel;
import io.netty.channel.embedded.EmbeddedChannel;
import org.junit.jupiter.api.Test;

/** At most a bound of connections handshake at once; a new one pushes the oldest out. */
class HandshakingTest {
    @Test
    void aNewConnectionOverTheBoundPushesTheOldestOutAndADoneOneLeaves() {
        Handshaking h = new Handshaking(2);
        Channel a = new EmbeddedChannel();
        Channel b = new EmbeddedChannel();
        Channel c = new EmbeddedChannel();
        Channel d = new EmbeddedChannel();
        assertNull(h.admit(a));
        assertNull(h.admit(b));
        assertSame(a, h.admit(c), "the oldest goes");
        assertTrue(h.done(b), "authenticated while still counted");
        assertNull(h.admit(d), "room again");
        assertSame(c, h.admit(new EmbeddedChannel()), "the oldest still waiting");
        assertEquals(2, h.size());
        assertFalse(h.done(a), "pushed out: it must not be welcomed");
        assertEquals(2, h.size());
        assertSame(d, h.oldest(), "full in all: the oldest gives way");
        assertEquals(1, h.size());
    }
}
