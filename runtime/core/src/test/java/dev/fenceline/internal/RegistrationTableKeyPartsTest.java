package dev.fenceline.internal;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.fenceline.FencelineException;
import dev.fenceline.MemoryRegion;
import dev.fenceline.RemoteKey;
import dev.fenceline.spi.RegionHandle;
import dev.fenceline.spi.SharedMemory;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * A region registered with several transports: one key part each, in transport order; closing
 * the region closes every handle; a transport that refuses undoes the others'; shared memory's
 * own transport is not asked to register it again.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class RegistrationTableKeyPartsTest {
    private final RegistrationTable table = new RegistrationTable(UUID.randomUUID(), "key-parts");
    /** What the handles saw: "name registered key", "name closed". */
    private final List<String> seen = new ArrayList<>();

    private final class Handle implements SharedMemory {
        final String name;
        final ByteBuffer memory;

        Handle(String name, ByteBuffer memory) {
            this.name = name;
            this.memory = memory;
        }

        @Override
        public byte[] transportData() {
            return name.getBytes(java.nio.charset.StandardCharsets.US_ASCII);
        }

        @Override
        public void registered(long keyId) {
            if (name.startsWith("failing")) {
                throw new IllegalStateException(name + ": lost its device");
            }
            seen.add(name + " registered " + keyId);
        }

        @Override
        public void close() {
            seen.add(name + " closed");
        }

        @Override
        public ByteBuffer buffer() {
            return memory;
        }
    }

    /** Transports in order; each registers (or not, or refuses) as its name says. */
    private void transports(String... names) {
        table.transports(new RegionTransports() {
            @Override
            public Shared allocateShared(long bytes) {
                for (String n : names) {
                    if (n.startsWith("shared")) {
                        return new Shared(n, new Handle(n, ByteBuffer.allocateDirect((int) bytes)));
                    }
                }
                return null;
            }

            @Override
            public Map<String, RegionHandle> register(ByteBuffer memory, String except) {
                Map<String, RegionHandle> handles = new LinkedHashMap<>();
                for (String n : names) {
                    if (n.equals(except) || n.startsWith("none")) {
                        continue;
                    }
                    if (n.startsWith("refuse")) {
                        handles.values().forEach(RegionHandle::close);
                        throw new FencelineException(n + ": its key table is full");
                    }
                    handles.put(n, new Handle(n, memory));
                }
                return handles;
            }
        });
    }

    @Test
    void everyTransportThatRegistersGivesTheKeyAPartInOrderAndEachIsClosed() {
        transports("rdma", "none-tcp", "cma");
        MemoryRegion r = table.register(ByteBuffer.allocateDirect(4096));
        RemoteKey key = RemoteKey.fromBytes(r.remoteKey().toBytes());
        assertEquals(List.of("rdma", "cma"), List.copyOf(key.partNames()));
        assertArrayEquals("cma".getBytes(java.nio.charset.StandardCharsets.US_ASCII), key.part("cma"));
        assertEquals(0, key.part("none-tcp").length);
        long k = key.keyId();
        assertEquals(List.of("rdma registered " + k, "cma registered " + k), seen);
        r.close();
        assertEquals(List.of("rdma registered " + k, "cma registered " + k, "rdma closed", "cma closed"), seen);
        r.close();
        assertEquals(4, seen.size(), "closed once");
    }

    @Test
    void aTransportThatRefusesFailsTheRegistrationAndUndoesTheOthers() {
        transports("rdma", "refuse-cma");
        FencelineException e = assertThrows(FencelineException.class,
                () -> table.register(ByteBuffer.allocateDirect(4096)));
        assertTrue(e.getMessage().contains("refuse-cma: its key table is full"), e.getMessage());
        assertEquals(List.of("rdma closed"), seen, "the handle made before the refusal is closed, none registered");
        assertEquals(0, table.openRegions());
    }

    @Test
    void sharedMemoryIsItsTransportsPartAndTheOthersRegisterIt() {
        transports("shared-shm", "rdma");
        MemoryRegion r = table.allocate(4096);
        RemoteKey key = r.remoteKey();
        assertEquals(List.of("shared-shm", "rdma"), List.copyOf(key.partNames()),
                "the shared memory's transport first, not asked again; the others after it");
        assertEquals(4096, r.buffer().capacity());
        r.close();
        assertEquals(List.of("shared-shm registered " + key.keyId(), "rdma registered " + key.keyId(),
                "shared-shm closed", "rdma closed"), seen);
    }

    /** A part the key cannot carry (a transport name outside [a-z0-9-_]): typed, and nothing is left behind. */
    @Test
    void aKeyThatCannotBeMadeLeavesNoRegionAndNoHandle() {
        transports("shared-shm", "RDMA");
        FencelineException e = assertThrows(FencelineException.class, () -> table.allocate(4096));
        assertTrue(e.getMessage().contains("worker 'key-parts' could not register a region with its transports"
                + " [shared-shm, RDMA]"), e.getMessage());
        assertEquals(List.of("shared-shm closed", "RDMA closed"), seen, "both handles are given back");
        assertEquals(0, table.openRegions());
    }

    /** A handle that fails when told the key: the region leaves the table and every handle is closed. */
    @Test
    void aHandleThatFailsOnItsKeyLeavesNoRegion() {
        transports("rdma", "failing-cma");
        FencelineException e = assertThrows(FencelineException.class,
                () -> table.register(ByteBuffer.allocateDirect(4096)));
        assertTrue(e.getMessage().contains("failing-cma: lost its device"), e.getMessage());
        assertEquals(3, seen.size(), seen.toString());
        assertTrue(seen.get(0).startsWith("rdma registered "), seen.toString());
        assertEquals(List.of("rdma closed", "failing-cma closed"), seen.subList(1, 3), "every handle is closed");
        assertEquals(0, table.openRegions());
    }

    @Test
    void sharedMemoryWhoseRegistrationIsRefusedIsClosed() {
        transports("shared-shm", "refuse-rdma");
        assertThrows(FencelineException.class, () -> table.allocate(4096));
        assertEquals(List.of("shared-shm closed"), seen, "the shared segment is given back");
    }
}
