package dev.fenceline.transport.ucx;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.fenceline.FencelineException;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** The ucx part of a remote key: it round-trips, and every malformed form is refused by name. */
class UcxKeyPartTest {
    private static UcxKeyPart sample() {
        Map<String, byte[]> rkeys = new LinkedHashMap<>();
        byte[] posix = new byte[24];
        Arrays.fill(posix, (byte) 3);
        rkeys.put("posix", posix);
        rkeys.put("cma", new byte[0]);
        rkeys.put("mlx5_0", new byte[] {1, 2, 3, 4});
        return new UcxKeyPart(17, rkeys);
    }

    @Test
    void aPartRoundTrips() {
        UcxKeyPart p = sample();
        UcxKeyPart back = UcxKeyPart.decode(p.encode());
        assertEquals(p, back);
        assertArrayEquals(p.encode(), back.encode());
        assertEquals(17, back.slot());
        assertTrue(back.reaches("cma") && !back.reaches("sysv"));
        assertEquals(0, back.rkey("cma").length);
        assertNull(back.rkey("tcp"));
        assertEquals(new UcxKeyPart(UcxKeyPart.NO_SLOT, Map.of()), UcxKeyPart.decode(
                new UcxKeyPart(UcxKeyPart.NO_SLOT, Map.of()).encode()));
    }

    @Test
    void everyTruncationAndATrailingByteAreRefused() {
        byte[] good = sample().encode();
        for (int n = 0; n < good.length; n++) {
            byte[] cut = Arrays.copyOf(good, n);
            assertThrows(FencelineException.class, () -> UcxKeyPart.decode(cut), "cut to " + n + " bytes");
        }
        FencelineException trailing = assertThrows(FencelineException.class,
                () -> UcxKeyPart.decode(Arrays.copyOf(good, good.length + 1)));
        assertTrue(trailing.getMessage().contains("1 bytes after its end"), trailing.getMessage());
    }

    @Test
    void fieldsOutsideTheirBoundsOrAlphabetAreRefused() {
        byte[] good = sample().encode();
        byte[] version = good.clone();
        version[0] = 9;
        assertTrue(assertThrows(FencelineException.class, () -> UcxKeyPart.decode(version)).getMessage()
                .contains("version"));
        byte[] slot = good.clone();
        slot[1] = (byte) 0x80; // slot -2^31
        assertTrue(assertThrows(FencelineException.class, () -> UcxKeyPart.decode(slot)).getMessage()
                .contains("slot"));
        byte[] many = good.clone();
        many[5] = 17;
        assertTrue(assertThrows(FencelineException.class, () -> UcxKeyPart.decode(many)).getMessage()
                .contains("17 UCT keys"));
        byte[] upper = good.clone();
        upper[7] = 'P'; // "posix" -> "Posix"
        assertTrue(assertThrows(FencelineException.class, () -> UcxKeyPart.decode(upper)).getMessage()
                .contains("component"));
        byte[] twice = new UcxKeyPart(1, Map.of("cma", new byte[0])).encode();
        byte[] dup = Arrays.copyOf(twice, twice.length + 6);
        dup[5] = 2;
        System.arraycopy(twice, 6, dup, twice.length, 6);
        assertTrue(assertThrows(FencelineException.class, () -> UcxKeyPart.decode(dup)).getMessage()
                .contains("once each"));
        byte[] huge = {1, 0, 0, 0, 1, 1, 3, 'c', 'm', 'a', (byte) 0xff, (byte) 0xff};
        assertTrue(assertThrows(FencelineException.class, () -> UcxKeyPart.decode(huge)).getMessage()
                .contains("65535 bytes"));
    }

    @Test
    void theConstructorRefusesWhatEncodingCouldNotCarry() {
        assertThrows(IllegalArgumentException.class, () -> new UcxKeyPart(-2, Map.of()));
        assertThrows(IllegalArgumentException.class, () -> new UcxKeyPart(0, Map.of("Has Space", new byte[0])));
        assertThrows(IllegalArgumentException.class, () -> new UcxKeyPart(0, Map.of("x",
                new byte[UcxKeyPart.MAX_RKEY + 1])));
    }
}
