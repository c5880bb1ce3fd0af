package dev.fenceline.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import dev.fenceline.MemoryRegion;
import dev.fenceline.RemoteAccessException;
import dev.fenceline.spi.RemoteAccessTarget;
import java.nio.ByteBuffer;
import java.util.UUID;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import java.util.concurrent.TimeUnit;

/** A put whose bytes arrive in pieces (a tcp frame spread over several socket reads). */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class RegistrationTablePartsTest {
    private final RegistrationTable table = new RegistrationTable(UUID.randomUUID(), "parts");
    private final MemoryRegion region = table.allocate(1024);
    private final long key = region.remoteKey().keyId();

    private static ByteBuffer filled(int n, int first) {
        ByteBuffer b = ByteBuffer.allocateDirect(n);
        for (int i = 0; i < n; i++) {
            b.put(i, (byte) (first + i));
        }
        return b;
    }

    @Test
    void partsAreWrittenOneAfterAnotherFromTheAddress() {
        ByteBuffer a = filled(100, 0);
        ByteBuffer b = filled(28, 100).position(3); // only position to limit counts
        ByteBuffer c = filled(0, 0);
        table.put(key, region.address() + 10, new ByteBuffer[] {a, b, c});
        ByteBuffer m = region.buffer();
        assertEquals(0, m.get(9), "the byte before the put");
        for (int i = 0; i < 100; i++) {
            assertEquals((byte) i, m.get(10 + i), "part 1 byte " + i);
        }
        for (int i = 0; i < 25; i++) {
            assertEquals((byte) (103 + i), m.get(110 + i), "part 2 byte " + i);
        }
        assertEquals(0, m.get(135), "the byte after the put");
        assertEquals(0, a.position(), "the parts are not consumed");
        assertEquals(3, b.position(), "the parts are not consumed");
    }

    @Test
    void aRangeThatEndsOutsideTheRegionWritesNothing() {
        // Every part but the last fits: the whole range is checked before the first byte.
        ByteBuffer[] parts = {filled(512, 1), filled(500, 1), filled(100, 1)};
        RemoteAccessException e = assertThrows(RemoteAccessException.class,
                () -> table.put(key, region.address() + 100, parts));
        assertEquals(RemoteAccessException.Reason.OUT_OF_BOUNDS, e.reason(), e.getMessage());
        ByteBuffer m = region.buffer();
        for (int i = 0; i < 1024; i++) {
            assertEquals(0, m.get(i), "byte " + i + " was written by a refused put");
        }
    }

    @Test
    void theDefaultGathersAndChecksTheSameWay() {
        RemoteAccessTarget plain = new RemoteAccessTarget() { // only put(long, long, ByteBuffer) of its own
            @Override
            public void put(long keyId, long address, ByteBuffer src) {
                table.put(keyId, address, src);
            }

            @Override
            public void get(long keyId, long address, ByteBuffer dst) {
                table.get(keyId, address, dst);
            }

            @Override
            public long atomic(long keyId, long address, int width, dev.fenceline.AtomicOp op, long operand) {
                return table.atomic(keyId, address, width, op, operand);
            }

            @Override
            public long compareAndSwap(long keyId, long address, int width, long expected, long desired) {
                return table.compareAndSwap(keyId, address, width, expected, desired);
            }

            @Override
            public void activeMessage(int id, ByteBuffer header, ByteBuffer payload) {
                table.activeMessage(id, header, payload);
            }
        };
        plain.put(key, region.address(), new ByteBuffer[] {filled(4, 10), filled(4, 20)});
        assertEquals(10, region.buffer().get(0));
        assertEquals(23, region.buffer().get(7));
        assertThrows(RemoteAccessException.class,
                () -> plain.put(key, region.address() + 1020, new ByteBuffer[] {filled(4, 1), filled(4, 1)}));
        assertEquals(0, region.buffer().get(1020), "nothing written by the refused put");
    }
}
