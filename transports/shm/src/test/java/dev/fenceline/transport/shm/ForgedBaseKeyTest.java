package dev.fenceline.transport.shm;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.typesafe.config.ConfigFactory;
import dev.fenceline.AtomicOp;
import dev.fenceline.Endpoint;
import dev.fenceline.Fenceline;
import dev.fenceline.MemoryRegion;
import dev.fenceline.RemoteAccessException;
import dev.fenceline.RemoteAccessException.Reason;
import dev.fenceline.RemoteKey;
import dev.fenceline.Worker;
import java.nio.ByteBuffer;
import java.util.Map;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * A key built in this process (the constructor takes any base; only an unpacked key's is checked)
 * with a base below zero and an address near the top, whose offset into the segment would wrap in
 * front of the data, onto the owner's header: refused as out of bounds, for the 8-byte put and the
 * 64-bit ADD that the mapping takes by address, before and under the grant, and nothing is written. ({@link DirectBoundsTest} holds the segment's own bound to the same.)
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class ForgedBaseKeyTest {
    private static <T> T await(CompletionStage<T> s) throws Exception {
        return s.toCompletableFuture().get(10, TimeUnit.SECONDS);
    }

    private static void assertOutOfBounds(ExecutionException e) {
        RemoteAccessException r = assertInstanceOf(RemoteAccessException.class, e.getCause());
        assertEquals(Reason.OUT_OF_BOUNDS, r.reason(), r.getMessage());
    }

    @Test
    void aKeyWhoseBaseIsBelowZeroCannotReachInFrontOfTheSegment() throws Exception {
        try (Fenceline f = Fenceline.create(ConfigFactory.parseString("fenceline.transports = [shm]"))) {
            Worker a = await(f.newWorker("a"));
            Worker b = await(f.newWorker("b"));
            MemoryRegion region = b.allocate(4096);
            RemoteKey key = a.unpackRemoteKey(region.remoteKey().toBytes());
            RemoteKey forged = new RemoteKey(key.ownerId(), key.keyId(), -(1L << 32), 1L << 33,
                    Map.of("shm", key.part("shm")));
            long address = Long.MAX_VALUE - 63; // address - base wraps; as an int, 64 bytes in front of the data
            Endpoint ep = await(a.connect(b.address()));
            ByteBuffer eight = ByteBuffer.allocateDirect(8).putLong(0, -1L);

            for (int round = 0; round < 50; round++) { // the first rounds before the grant, the rest under it
                assertOutOfBounds(assertThrows(ExecutionException.class, () -> await(ep.put(eight, address, forged))));
                assertOutOfBounds(assertThrows(ExecutionException.class,
                        () -> await(ep.atomicFetch64(AtomicOp.ADD, address, forged, 1))));
                // The implicit ones are refused on the calling thread, before anything is issued.
                assertEquals(Reason.OUT_OF_BOUNDS, assertThrows(RemoteAccessException.class,
                        () -> ep.putImplicit(eight, address, forged)).reason());
                assertEquals(Reason.OUT_OF_BOUNDS, assertThrows(RemoteAccessException.class,
                        () -> ep.atomicPostImplicit64(AtomicOp.ADD, address, forged, 1)).reason());
                await(ep.flush()); // nothing was issued that could fail it
                await(ep.atomicFetch64(AtomicOp.ADD, region.address(), key, 1)); // the endpoint still serves
            }
            ByteBuffer data = region.buffer();
            assertEquals(50, data.order(java.nio.ByteOrder.nativeOrder()).getLong(0), "only the well-keyed ADDs landed");
            for (int i = 8; i < data.capacity(); i++) {
                assertEquals(0, data.get(i), "byte " + i);
            }
            assertTrue(a.statistics().direct() > 0, "some rounds took the fast path: " + a.statistics());
        }
    }
}
