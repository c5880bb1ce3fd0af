package dev.fenceline;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertDoesNotThrow;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.fenceline.RemoteAccessException.Reason;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import java.util.concurrent.TimeUnit;

@Timeout(value = 60, unit = TimeUnit.SECONDS)
class RemoteKeyTest {
    private final RemoteKey key = new RemoteKey(UUID.randomUUID(), 0x9c1e_0000_1234_5678L, 0x7f00_0000_1000L, 4096,
            partsOf("shm", new byte[] {1, 2}, "ucx", new byte[] {3, 4, 5}));

    private static Map<String, byte[]> partsOf(Object... nameAndData) {
        Map<String, byte[]> m = new java.util.LinkedHashMap<>();
        for (int i = 0; i < nameAndData.length; i += 2) {
            m.put((String) nameAndData[i], (byte[]) nameAndData[i + 1]);
        }
        return m;
    }

    @Test
    void aNegativeOrOverflowingBaseIsMalformedAtUnpack() {
        for (long[] bad : new long[][] {{-4096, 64}, {Long.MIN_VALUE, 1}, {Long.MAX_VALUE - 10, 64}}) {
            byte[] b = new RemoteKey(UUID.randomUUID(), 1, bad[0], bad[1], java.util.Map.of()).toBytes();
            RemoteAccessException e = assertThrows(RemoteAccessException.class, () -> RemoteKey.fromBytes(b));
            assertEquals(Reason.MALFORMED_KEY, e.reason());
            assertTrue(e.getMessage().contains(String.format("0x%x", bad[0])), "names the base: " + e.getMessage());
        }
        byte[] top = new RemoteKey(UUID.randomUUID(), 1, Long.MAX_VALUE - 64, 64, java.util.Map.of()).toBytes();
        assertDoesNotThrow(() -> RemoteKey.fromBytes(top), "a region that ends exactly at the top is fine");
    }

    @Test
    void roundTripsWithEveryPartInOrder() {
        RemoteKey back = RemoteKey.fromBytes(key.toBytes());
        assertEquals(key, back);
        assertEquals(List.of("shm", "ucx"), List.copyOf(back.partNames()));
        assertArrayEquals(new byte[] {3, 4, 5}, back.part("ucx"));
        assertArrayEquals(new byte[0], back.part("tcp"), "a transport without a part gets nothing");
        back.part("shm")[0] = 99;
        assertArrayEquals(new byte[] {1, 2}, back.part("shm"), "a part is handed out as a copy");
    }

    @Test
    void partsOutsideTheBoundsAreRefusedByName() {
        UUID o = UUID.randomUUID();
        IllegalArgumentException name = assertThrows(IllegalArgumentException.class,
                () -> new RemoteKey(o, 1, 0, 64, partsOf("Shm!", new byte[1])));
        assertTrue(name.getMessage().contains("part name 'Shm!'"), name.getMessage());
        IllegalArgumentException big = assertThrows(IllegalArgumentException.class,
                () -> new RemoteKey(o, 1, 0, 64, partsOf("a", new byte[3000], "b", new byte[1097])));
        assertTrue(big.getMessage().contains("4097 bytes of part data, at most 4096"), big.getMessage());
        Map<String, byte[]> many = new java.util.LinkedHashMap<>();
        for (int i = 0; i < 17; i++) {
            many.put("t" + i, new byte[0]);
        }
        IllegalArgumentException count = assertThrows(IllegalArgumentException.class,
                () -> new RemoteKey(o, 1, 0, 64, many));
        assertTrue(count.getMessage().contains("17 parts, at most 16"), count.getMessage());
    }

    /** Bytes a peer wrote: every field of the parts is checked before use. */
    @Test
    void hostilePartsAreMalformed() {
        byte[] good = key.toBytes();
        int parts = 4 + 1 + 16 + 8 + 8 + 8 + 1; // the part count, after the access bits
        byte[] noAccess = good.clone();
        noAccess[parts - 1] = 0;
        assertMalformed(noAccess, "access bits 0x0");
        noAccess[parts - 1] = 9;
        assertMalformed(noAccess, "access bits 0x9");
        byte[] b = good.clone();
        b[parts] = 17;
        assertMalformed(b, "17 parts, at most 16");
        b = good.clone();
        b[parts + 1] = 0; // first part's name length: empty
        assertMalformed(b, "no valid name");
        b = good.clone();
        b[parts + 2] = 'S'; // "Shm"
        assertMalformed(b, "no valid name");
        b = good.clone();
        java.nio.ByteBuffer.wrap(b).putInt(parts + 1 + 1 + 3, 5000); // shm's data length
        assertMalformed(b, "part 'shm' of 5000 bytes");
        b = good.clone();
        java.nio.ByteBuffer.wrap(b).putInt(parts + 1 + 1 + 3, -1);
        assertMalformed(b, "part 'shm' of -1 bytes");
        byte[] twice = new RemoteKey(key.ownerId(), 5, 0, 64, partsOf("shm", new byte[] {1}, "ucx", new byte[] {1}))
                .toBytes();
        int second = parts + 1 + 1 + 3 + 4 + 1; // the second part's name length: rename "ucx" to "shm"
        twice[second + 1] = 's';
        twice[second + 2] = 'h';
        twice[second + 3] = 'm';
        assertMalformed(twice, "two parts named 'shm'");
        byte[] v1 = good.clone();
        v1[4] = 1;
        assertMalformed(v1, "unsupported version 1 (this runtime reads 2)");
    }

    @Test
    void accessTravelsWithTheKey() {
        RemoteKey readOnly = new RemoteKey(UUID.randomUUID(), 7, 0, 64, java.util.EnumSet.of(Access.READ), Map.of());
        RemoteKey back = RemoteKey.fromBytes(readOnly.toBytes());
        assertEquals(java.util.Set.of(Access.READ), back.access());
        assertTrue(back.permits(Access.READ));
        assertTrue(!back.permits(Access.WRITE) && !back.permits(Access.ATOMIC));
        assertTrue(!back.equals(new RemoteKey(readOnly.ownerId(), 7, 0, 64, Map.of())), "access is part of the key");
        assertEquals(Access.all(), key.access(), "a key without a word on access permits everything");
        assertThrows(IllegalArgumentException.class,
                () -> new RemoteKey(UUID.randomUUID(), 7, 0, 64, java.util.EnumSet.noneOf(Access.class), Map.of()));
    }

    private static void assertMalformed(byte[] b, String why) {
        RemoteAccessException e = assertThrows(RemoteAccessException.class, () -> RemoteKey.fromBytes(b));
        assertEquals(Reason.MALFORMED_KEY, e.reason());
        assertTrue(e.getMessage().contains(why), "expected '" + why + "' in: " + e.getMessage());
    }

    @Test
    void everyTruncationIsATypedError() {
        byte[] b = key.toBytes();
        for (int n = 0; n < b.length; n++) {
            RemoteAccessException e = assertThrows(RemoteAccessException.class,
                    () -> RemoteKey.fromBytes(Arrays.copyOf(b, (int) Math.min(Integer.MAX_VALUE, b.length - 1L))));
            assertEquals(Reason.MALFORMED_KEY, e.reason());
            final int len = n;
            RemoteAccessException e2 = assertThrows(RemoteAccessException.class,
                    () -> RemoteKey.fromBytes(Arrays.copyOf(b, len)));
            assertEquals(Reason.MALFORMED_KEY, e2.reason());
        }
    }

    @Test
    void boundsAreCheckedWithoutOverflow() {
        assertDoesNotThrow(() -> key.checkBounds(key.baseAddress(), 4096));
        assertDoesNotThrow(() -> key.checkBounds(key.baseAddress() + 4095, 1));
        RemoteAccessException e = assertThrows(RemoteAccessException.class,
                () -> key.checkBounds(key.baseAddress() + 4095, 2));
        assertEquals(Reason.OUT_OF_BOUNDS, e.reason());
        assertTrue(e.getMessage().contains("0x7f0000001fff + 2 outside region [0x7f0000001000, 0x7f0000002000)"),
                e.getMessage());
        assertThrows(RemoteAccessException.class, () -> key.checkBounds(key.baseAddress() - 1, 1));
        assertThrows(RemoteAccessException.class, () -> key.checkBounds(key.baseAddress() + 8, Long.MAX_VALUE));
        assertThrows(RemoteAccessException.class, () -> key.checkBounds(Long.MAX_VALUE, 1));
    }

    @Test
    void aKeyBuiltWithABaseBelowZeroOrANegativeLengthBoundsNothingByOverflow() {
        // The constructor takes any base and length (fromBytes refuses these): address - base and
        // length - bytes must not wrap into a range that passes.
        RemoteKey below = new RemoteKey(UUID.randomUUID(), 1, -(1L << 32), 1L << 33, Map.of());
        RemoteAccessException e = assertThrows(RemoteAccessException.class,
                () -> below.checkBounds(Long.MAX_VALUE - 63, 8));
        assertEquals(Reason.OUT_OF_BOUNDS, e.reason());
        assertDoesNotThrow(() -> below.checkBounds(0, 8), "inside its claimed range");
        RemoteKey negative = new RemoteKey(UUID.randomUUID(), 1, 0x1000, Long.MIN_VALUE, Map.of());
        assertThrows(RemoteAccessException.class, () -> negative.checkBounds(0x1000 + (1L << 40), 8));
        assertThrows(RemoteAccessException.class, () -> negative.checkBounds(0x1000, 0));
    }

    @Test
    void messagesDoNotLeakTheWholeKey() {
        assertTrue(key.toString().contains("9c1e.."));
        assertTrue(!key.toString().contains("12345678"));
    }

    @Test
    void workerAddressRoundTripsAndRejectsGarbage() {
        WorkerAddress a = new WorkerAddress(UUID.randomUUID(), "w", Map.of("sim", new byte[] {4, 5}));
        assertEquals(a, WorkerAddress.fromBytes(a.toBytes()));
        byte[] b = a.toBytes();
        for (int n = 0; n < b.length; n++) {
            final int len = n;
            assertThrows(FencelineException.class, () -> WorkerAddress.fromBytes(Arrays.copyOf(b, len)));
        }
        byte[] trailing = Arrays.copyOf(b, b.length + 1);
        FencelineException e = assertThrows(FencelineException.class, () -> WorkerAddress.fromBytes(trailing));
        assertTrue(e.getMessage().contains("trailing"), e.getMessage());
    }
}
