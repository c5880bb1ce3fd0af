package dev.fenceline;

import static org.junit.jupiter.api.Assertions.assertDoesNotThrow;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.fenceline.RemoteAccessException.Reason;
import java.util.Arrays;
import java.util.Map;
import java.util.UUID;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import java.util.concurrent.TimeUnit;

@Timeout(value = 60, unit = TimeUnit.SECONDS)
class RemoteKeyTest {
    private final RemoteKey key = new RemoteKey(UUID.randomUUID(), 0x9c1e_0000_1234_5678L, 0x7f00_0000_1000L, 4096,
            new byte[] {1, 2});

    @Test
    void aNegativeOrOverflowingBaseIsMalformedAtUnpack() {
        for (long[] bad : new long[][] {{-4096, 64}, {Long.MIN_VALUE, 1}, {Long.MAX_VALUE - 10, 64}}) {
            byte[] b = new RemoteKey(UUID.randomUUID(), 1, bad[0], bad[1], new byte[0]).toBytes();
            RemoteAccessException e = assertThrows(RemoteAccessException.class, () -> RemoteKey.fromBytes(b));
            assertEquals(Reason.MALFORMED_KEY, e.reason());
            assertTrue(e.getMessage().contains(String.format("0x%x", bad[0])), "names the base: " + e.getMessage());
        }
        byte[] top = new RemoteKey(UUID.randomUUID(), 1, Long.MAX_VALUE - 64, 64, new byte[0]).toBytes();
        assertDoesNotThrow(() -> RemoteKey.fromBytes(top), "a region that ends exactly at the top is fine");
    }

    @Test
    void roundTrips() {
        assertEquals(key, RemoteKey.fromBytes(key.toBytes()));
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
