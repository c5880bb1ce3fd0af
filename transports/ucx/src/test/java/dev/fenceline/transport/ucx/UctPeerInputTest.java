package dev.fenceline.transport.ucx;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.fenceline.Access;
import java.util.EnumSet;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * The native binding's handling of what a peer sends (its framed address, its packed keys) and of
 * failures: malformed input, and posix segments named otherwise than through /proc, are refused with
 * a typed error before UCT reads them, and each thread reads the failure of its own call.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class UctPeerInputTest {
    private static final EnumSet<Access> ALL = EnumSet.allOf(Access.class);

    @BeforeEach
    void ucx() {
        UcxAssumptions.ucxAvailable();
    }

    @Test
    void malformedPeerInputIsRefusedWithATypedError() {
        UctResource r = UcxAssumptions.resource("posix", "memory");
        try (UctWorker w = UctWorker.create()) {
            UctIface a = w.open(r, Map.of());
            byte[] good = a.address();
            assertFalse(a.reachable(new byte[0]));
            assertFalse(a.reachable(new byte[] {1, 2, 3}));
            byte[] longer = java.util.Arrays.copyOf(good, good.length + 1);
            assertFalse(a.reachable(longer), "an address with a trailing byte");
            byte[] lying = good.clone();
            lying[0] = (byte) 0xff; // claims a longer device address than it holds
            assertFalse(a.reachable(lying));
            UctException bad = assertThrows(UctException.class, () -> a.connect(lying));
            assertTrue(bad.getMessage().contains("malformed"), bad.getMessage());
            UctException key = assertThrows(UctException.class, () -> a.unpack(new byte[3]));
            assertTrue(key.getMessage().contains("wrong length"), key.getMessage());
            assertNotEquals(0, key.status());
            UctException setting = assertThrows(UctException.class,
                    () -> w.open(r, Map.of("NO_SUCH_SETTING", "1")));
            assertTrue(setting.getMessage().contains("NO_SUCH_SETTING"), setting.getMessage());
            UctException device = assertThrows(UctException.class,
                    () -> w.open(new UctResource("posix", "posix", "posix", "nodevice", "shm"), Map.of()));
            assertTrue(device.getMessage().contains("posix/nodevice"), device.getMessage());
            assertEquals(UctStatus.NO_DEVICE, device.status());
            assertArrayEquals(good, a.address(), "the iface still serves");
        }
    }

    /**
     * UCT's posix names a segment by its id's bits: bit 63, a descriptor of the owner's opened through
     * /proc (which opens only for a process this one may inspect); bit 62 alone, a name under /dev/shm
     * (a file any user may have made); neither, a file in a directory it reads from the bytes after
     * the id (past a peer's bytes where the address and the key carry no directory, as by default).
     * A peer's address and key without bit 63 are refused before UCT reads them; with it they serve.
     */
    @Test
    void aPeersPosixSegmentNamedOtherwiseThanThroughProcIsRefused() {
        UctResource r = UcxAssumptions.resource("posix", "memory");
        try (UctWorker w = UctWorker.create()) {
            UctIface a = w.open(r, Map.of());
            UctIface b = w.open(r, Map.of());
            byte[] address = b.address();
            int iface = 4 + ((address[0] & 0xff) | (address[1] & 0xff) << 8); // after the framing and device address
            assertTrue((address[iface + 7] & 0x80) != 0, "this worker's own FIFO is named through /proc");
            UctMemory region = b.allocate(4096, ALL);
            byte[] key = region.pack();
            assertTrue((key[7] & 0x80) != 0, "this worker's own segment is named through /proc");
            for (int top : new int[] {0x00, 0x40}) { // by a path; under /dev/shm
                byte[] named = address.clone();
                named[iface + 7] = (byte) (named[iface + 7] & 0x3f | top);
                assertFalse(a.reachable(named));
                assertTrue(assertThrows(UctException.class, () -> a.connect(named)).getMessage().contains("malformed"));
                byte[] namedKey = key.clone();
                namedKey[7] = (byte) (namedKey[7] & 0x3f | top);
                UctException refused = assertThrows(UctException.class, () -> a.unpack(namedKey));
                assertTrue(refused.getMessage().contains("naming its segment otherwise than through /proc"),
                        refused.getMessage());
            }
            assertTrue(a.reachable(address), "the real address still serves");
            assertTrue(a.unpack(key) != null, "and the real key");
            a.connect(address);
        }
    }

    /**
     * The memory-domain calls run on callers' threads while the worker's own thread makes calls of
     * its own: each thread reads the failure of its own last call, not another thread's later one.
     */
    @Test
    void eachThreadReadsTheFailureOfItsOwnCall() throws Exception {
        try (UctWorker w = UctWorker.create()) {
            UctIface a = w.open(UcxAssumptions.resource("posix", "memory"), Map.of());
            Shim shim = w.shim();
            java.lang.reflect.Field handle = UctWorker.class.getDeclaredField("handle");
            handle.setAccessible(true);
            long worker = handle.getLong(w);
            assertEquals(0, shim.flu_rkey_unpack(a.handle, new byte[3], 3));
            String[] other = new String[1];
            Thread t = new Thread(() -> {
                assertEquals(0, shim.flu_mem_reg(a.handle, 4096, 0, 7));
                other[0] = shim.flu_last_error(worker);
            });
            t.start();
            t.join();
            assertTrue(other[0] != null && other[0].contains("register"), String.valueOf(other[0]));
            String mine = shim.flu_last_error(worker);
            assertTrue(mine.contains("wrong length"), mine);
        }
    }
}
