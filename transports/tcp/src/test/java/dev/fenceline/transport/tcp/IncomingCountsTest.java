package dev.fenceline.transport.tcp;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;

import java.net.InetAddress;
import java.net.UnknownHostException;
import org.junit.jupiter.api.Test;

/** The incoming connection limits, and that an address is forgotten when its last connection closes. */
class IncomingCountsTest {
    private static InetAddress v6(int i) throws UnknownHostException {
        byte[] a = new byte[16];
        a[0] = 0x20;
        a[1] = 0x01;
        a[12] = (byte) (i >>> 24);
        a[13] = (byte) (i >>> 16);
        a[14] = (byte) (i >>> 8);
        a[15] = (byte) i;
        return InetAddress.getByAddress(a);
    }

    @Test
    void aPeerConnectingOnceFromEachOfManyAddressesLeavesNothingBehind() throws Exception {
        IncomingCounts c = new IncomingCounts(4096, 1024);
        for (int i = 0; i < 100_000; i++) {
            InetAddress a = v6(i);
            assertNull(c.admit(a));
            c.closed(a);
        }
        assertEquals(0, c.addresses(), "addresses remembered with nothing open");
        assertEquals(0, c.open());
    }

    @Test
    void theLimitsInAllAndPerAddressHoldAndARefusalCountsNothing() throws Exception {
        IncomingCounts c = new IncomingCounts(5, 3);
        InetAddress a = v6(1);
        InetAddress b = v6(2);
        for (int i = 0; i < 3; i++) {
            assertNull(c.admit(a));
        }
        IncomingCounts.Refusal fourth = c.admit(a);
        assertNotNull(fourth, "a fourth from one address");
        assertEquals(3, fourth.fromAddress());
        assertEquals(3, fourth.inAll());
        assertNull(c.admit(b));
        assertNull(c.admit(b));
        IncomingCounts.Refusal sixth = c.admit(b);
        assertNotNull(sixth, "a sixth in all");
        assertEquals(5, sixth.inAll());
        assertEquals(2, sixth.fromAddress());
        assertEquals(5, c.open());
        c.closed(a);
        assertNull(c.admit(b), "room again once one closed");
        for (int i = 0; i < 2; i++) {
            c.closed(a);
        }
        for (int i = 0; i < 3; i++) {
            c.closed(b);
        }
        assertEquals(0, c.open());
        assertEquals(0, c.addresses());
    }
}
