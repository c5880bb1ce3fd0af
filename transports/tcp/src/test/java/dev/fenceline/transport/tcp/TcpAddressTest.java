package dev.fenceline.transport.tcp;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.fenceline.FencelineException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.UnknownHostException;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HexFormat;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import java.util.concurrent.TimeUnit;

/** TcpAddress encodes and strictly decodes a worker's listening addresses; TcpTransport.sameNetwork matches subnets. */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class TcpAddressTest {
    private static final List<InetSocketAddress> V4 = List.of(new InetSocketAddress("10.0.0.1", 7000),
            new InetSocketAddress("192.168.200.3", 65535));
    private static final List<InetSocketAddress> V6 = List.of(new InetSocketAddress("::1", 1),
            new InetSocketAddress("2001:db8::ff00:42:8329", 40000));

    private static InetAddress ip(String literal) throws UnknownHostException {
        return InetAddress.getByName(literal); // literals only: no lookup
    }

    private static byte[] bytes(String hex) {
        return HexFormat.of().parseHex(hex);
    }

    private static void malformed(byte[] in, String why) {
        FencelineException e = assertThrows(FencelineException.class, () -> TcpAddress.decode(in),
                in == null ? "null" : HexFormat.of().formatHex(in));
        assertTrue(e.getMessage().startsWith("tcp: ") && e.getMessage().contains(why), e.getMessage());
    }

    @Test
    void roundTrips() {
        List<InetSocketAddress> mixed = new ArrayList<>(V4);
        mixed.addAll(V6);
        for (List<InetSocketAddress> list : List.of(V4, V6, mixed, V4.subList(0, 1))) {
            byte[] b = TcpAddress.encode(list);
            assertEquals(list, TcpAddress.decode(b));
        }
        assertEquals("0102" + "040a000001" + "1b58" + "04c0a8c803" + "ffff", HexFormat.of().formatHex(
                TcpAddress.encode(V4)), "the documented format");
        assertEquals(2 + 2 * (1 + 16 + 2), TcpAddress.encode(V6).length);
    }

    @Test
    void sixteenAddressesAtMost() {
        List<InetSocketAddress> many = new ArrayList<>();
        for (int i = 1; i <= 17; i++) {
            many.add(new InetSocketAddress("10.0.0." + i, 1000 + i));
        }
        assertEquals(many.subList(0, 16), TcpAddress.decode(TcpAddress.encode(many.subList(0, 16))));
        malformed(TcpAddress.encode(many), "17 addresses");
    }

    @Test
    void malformedInputsAreNamed() {
        malformed(null, "no tcp address");
        malformed(new byte[0], "truncated at byte 0");
        malformed(bytes("02010400000001 0001".replace(" ", "")), "version 2");
        malformed(bytes("00"), "version 0");
        malformed(bytes("0100"), "0 addresses");
        malformed(bytes("0101050a0000010a0001"), "address 0 has 5 bytes");
        malformed(bytes("0101000001"), "address 0 has 0 bytes");
        malformed(bytes("0102047f000001" + "0050" + "047f000002" + "0000"), "address 1 has port 0");
        malformed(bytes("0101047f0000010050" + "00"), "1 trailing bytes");
    }

    @Test
    void everyTruncationIsRefused() {
        byte[] full = TcpAddress.encode(V6);
        for (int n = 0; n < full.length; n++) {
            malformed(Arrays.copyOf(full, n), "truncated at byte");
        }
    }

    @Test
    void sameNetwork() throws Exception {
        assertTrue(TcpTransport.sameNetwork(ip("10.1.2.3"), ip("10.200.9.9"), 8));
        assertFalse(TcpTransport.sameNetwork(ip("10.1.2.3"), ip("11.1.2.3"), 8));
        assertTrue(TcpTransport.sameNetwork(ip("192.168.1.10"), ip("192.168.1.200"), 24));
        assertFalse(TcpTransport.sameNetwork(ip("192.168.1.10"), ip("192.168.2.10"), 24));
        assertTrue(TcpTransport.sameNetwork(ip("172.16.15.1"), ip("172.16.0.9"), 20)); // 15 = 0000 1111
        assertFalse(TcpTransport.sameNetwork(ip("172.16.16.1"), ip("172.16.0.9"), 20)); // 16 = 0001 0000
        assertTrue(TcpTransport.sameNetwork(ip("192.168.1.10"), ip("192.168.1.10"), 32));
        assertFalse(TcpTransport.sameNetwork(ip("192.168.1.10"), ip("192.168.1.11"), 32)); // last bit only
        assertTrue(TcpTransport.sameNetwork(ip("1.2.3.4"), ip("254.3.2.1"), 0));
        assertTrue(TcpTransport.sameNetwork(ip("fd00:1:2:3::1"), ip("fd00:1:2:3:ffff::9"), 64));
        assertFalse(TcpTransport.sameNetwork(ip("fd00:1:2:3::1"), ip("fd00:1:2:4::1"), 64));
        assertTrue(TcpTransport.sameNetwork(ip("::1"), ip("fe80::1"), 0));
        for (int prefix : new int[] {0, 8, 24, 32}) {
            assertFalse(TcpTransport.sameNetwork(ip("127.0.0.1"), ip("::1"), prefix), "mixed families /" + prefix);
            assertFalse(TcpTransport.sameNetwork(ip("::"), ip("0.0.0.0"), prefix), "all-zero, mixed /" + prefix);
        }
    }
}
