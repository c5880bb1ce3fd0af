package dev.fenceline.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.fenceline.EndpointClosedException;
import dev.fenceline.MemoryRegion;
import dev.fenceline.spi.RegionHandle;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Once its worker closes, a table registers and allocates nothing more: a region made after the
 * close (or while it walked the regions) was never closed, its transports' handles held for good.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class RegistrationTableCloseAllTest {
    private final RegistrationTable table = new RegistrationTable(UUID.randomUUID(), "closing");
    private final List<String> seen = new ArrayList<>();

    @Test
    void nothingIsRegisteredOrAllocatedAfterCloseAll() {
        MemoryRegion before = table.allocate(64);
        table.closeAll();
        assertTrue(before.isClosed(), "closed with the worker");
        EndpointClosedException e = assertThrows(EndpointClosedException.class, () -> table.allocate(64));
        assertTrue(e.getMessage().contains("worker 'closing' is closed"), e.getMessage());
        assertThrows(EndpointClosedException.class, () -> table.register(ByteBuffer.allocateDirect(64)));
        assertEquals(0, table.openRegions());
    }

    /** closeAll runs while a registration is under way: the region it misses is closed by the registration. */
    @Test
    void aRegistrationThatRacesCloseAllClosesItsRegion() {
        table.transports(new RegionTransports() {
            @Override
            public Shared allocateShared(long bytes) {
                return null;
            }

            @Override
            public Map<String, RegionHandle> register(ByteBuffer memory, String except) {
                table.closeAll(); // the worker closes between the registration's first check and its insert
                return Map.of("t", new RegionHandle() {
                    @Override
                    public byte[] transportData() {
                        return new byte[] {1};
                    }

                    @Override
                    public void registered(long keyId) {
                        seen.add("t registered");
                    }

                    @Override
                    public void close() {
                        seen.add("t closed");
                    }
                });
            }
        });
        assertThrows(EndpointClosedException.class, () -> table.register(ByteBuffer.allocateDirect(64)));
        assertEquals(List.of("t registered", "t closed"), seen, "the transport's handle is let go");
        assertEquals(0, table.openRegions());
    }
}
