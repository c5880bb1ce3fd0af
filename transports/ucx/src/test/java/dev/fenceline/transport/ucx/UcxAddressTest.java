package dev.fenceline.transport.ucx;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.fenceline.FencelineException;
import java.nio.ByteBuffer;
import java.util.Arrays;
import java.util.List;
import org.junit.jupiter.api.Test;

/** The ucx part of a worker address: it round-trips, and every malformed form is refused by name. */
class UcxAddressTest {
    private static UcxAddress sample() {
        byte[] posix = new byte[4 + 8 + 8];
        Arrays.fill(posix, (byte) 7);
        byte[] tcp = new byte[4 + 18 + 2];
        Arrays.fill(tcp, (byte) 9);
        return new UcxAddress("8f2c-boot 4026531836", 4242, 123456789L, List.of(
                new UcxAddress.Iface("posix", "memory", posix), new UcxAddress.Iface("tcp", "lo", tcp),
                new UcxAddress.Iface("rc_mlx5", "mlx5_0:1", new byte[0])),
                new UcxAddress.Table("posix", 0x7f00_0000_1000L, 4160, new byte[24]));
    }

    @Test
    void anAddressRoundTrips() {
        UcxAddress a = sample();
        UcxAddress back = UcxAddress.decode(a.encode());
        assertEquals(a, back);
        assertArrayEquals(a.encode(), back.encode());
        assertEquals(List.of("posix", "tcp", "rc_mlx5"), back.ifaces().stream().map(UcxAddress.Iface::transport).toList());
        assertEquals("posix", back.table().component());
        UcxAddress none = new UcxAddress("h", 1, 2, List.of(), null);
        assertEquals(none, UcxAddress.decode(none.encode()));
    }

    @Test
    void everyTruncationAndATrailingByteAreRefused() {
        byte[] good = sample().encode();
        for (int n = 0; n < good.length; n++) {
            byte[] cut = Arrays.copyOf(good, n);
            assertThrows(FencelineException.class, () -> UcxAddress.decode(cut), "cut to " + n + " bytes");
        }
        FencelineException trailing = assertThrows(FencelineException.class,
                () -> UcxAddress.decode(Arrays.copyOf(good, good.length + 1)));
        assertTrue(trailing.getMessage().contains("1 bytes after its end"), trailing.getMessage());
    }

    @Test
    void fieldsOutsideTheirAlphabetOrBoundsAreRefused() {
        byte[] good = sample().encode();
        byte[] version = good.clone();
        version[0] = 1;
        assertTrue(assertThrows(FencelineException.class, () -> UcxAddress.decode(version)).getMessage()
                .contains("of version 1, this worker's of " + UcxWireup.VERSION));
        int hostLength = Short.toUnsignedInt(ByteBuffer.wrap(good, 1, 2).getShort());
        int count = 3 + hostLength + 16;
        byte[] many = good.clone();
        many[count] = 33;
        assertTrue(assertThrows(FencelineException.class, () -> UcxAddress.decode(many)).getMessage()
                .contains("33 ifaces"));
        byte[] upper = good.clone();
        upper[count + 2] = 'P'; // "posix" -> "Posix": not a UCT transport's alphabet
        assertTrue(assertThrows(FencelineException.class, () -> UcxAddress.decode(upper)).getMessage()
                .contains("transport name"));
        byte[] control = good.clone();
        control[count + 1 + 1 + 5 + 1] = 0x07; // the device's first byte
        assertTrue(assertThrows(FencelineException.class, () -> UcxAddress.decode(control)).getMessage()
                .contains("printable"));
        byte[] host = good.clone();
        host[3] = 0x1b;
        assertTrue(assertThrows(FencelineException.class, () -> UcxAddress.decode(host)).getMessage()
                .contains("host identity"));
        byte[] flag = good.clone();
        flag[good.length - 1 - 24 - 2 - 16 - 1 - 5 - 1] = 2; // the key-table flag
        assertTrue(assertThrows(FencelineException.class, () -> UcxAddress.decode(flag)).getMessage()
                .contains("key-table flag"));
        byte[] huge = ByteBuffer.allocate(3 + 16 + 1 + 1 + 1 + 1 + 1 + 2).put(UcxWireup.VERSION).putShort((short) 0)
                .putLong(1).putLong(1).put((byte) 1).put((byte) 1).put((byte) 'x').put((byte) 1).put((byte) 'y')
                .putShort((short) 60000).array();
        assertTrue(assertThrows(FencelineException.class, () -> UcxAddress.decode(huge)).getMessage()
                .contains("60000 bytes"));
    }

    @Test
    void theConstructorRefusesWhatEncodingCouldNotCarry() {
        assertThrows(IllegalArgumentException.class, () -> new UcxAddress.Iface("posix", "has space", new byte[0]));
        assertThrows(IllegalArgumentException.class, () -> new UcxAddress.Iface("posix", "memory",
                new byte[UcxAddress.MAX_UCT_ADDRESS + 1]));
        assertThrows(IllegalArgumentException.class, () -> new UcxAddress("h", 1, 1,
                java.util.Collections.nCopies(UcxAddress.MAX_IFACES + 1, new UcxAddress.Iface("tcp", "lo", new byte[0])),
                null));
        assertThrows(IllegalArgumentException.class, () -> new UcxAddress.Table("Posix", 0, 0, new byte[0]));
    }
}
