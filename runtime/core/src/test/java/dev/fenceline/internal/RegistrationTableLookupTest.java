package dev.fenceline.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.fenceline.MemoryRegion;
import dev.fenceline.RemoteAccessException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.SplittableRandom;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * The target's lookup of a key keeps the region it found last: operations alternating between
 * regions land in the right one, and once a region's close returned no operation reaches it, however
 * recently it was found. The race test's seed is printed.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class RegistrationTableLookupTest {
    private final RegistrationTable table = new RegistrationTable(UUID.randomUUID(), "lookup");

    private static ByteBuffer word(long v) {
        return ByteBuffer.allocate(8).order(ByteOrder.nativeOrder()).putLong(0, v);
    }

    private void put(MemoryRegion r, long offset, long v) {
        table.put(r.remoteKey().keyId(), r.address() + offset, word(v));
    }

    private static long read(MemoryRegion r, int offset) {
        return r.buffer().getLong(offset);
    }

    @Test
    void operationsAlternatingBetweenRegionsLandInTheirOwn() {
        MemoryRegion a = table.allocate(64);
        MemoryRegion b = table.allocate(64);
        for (int i = 0; i < 8; i++) {
            put(a, i * 8L, 100 + i);
            put(b, i * 8L, 200 + i);
            put(b, i * 8L, 300 + i); // twice in a row: the kept region
        }
        for (int i = 0; i < 8; i++) {
            assertEquals(100 + i, read(a, i * 8));
            assertEquals(300 + i, read(b, i * 8));
        }
        // a's key with an address of b's: checked against a's bounds, whichever region was found last
        RemoteAccessException e = assertThrows(RemoteAccessException.class,
                () -> table.put(a.remoteKey().keyId(), b.address() + 8, word(1)));
        assertEquals(RemoteAccessException.Reason.OUT_OF_BOUNDS, e.reason());
    }

    @Test
    void aRegionFoundLastIsRefusedOnceClosed() {
        MemoryRegion a = table.allocate(64);
        put(a, 0, 1); // a is the region found last
        a.close();
        RemoteAccessException e = assertThrows(RemoteAccessException.class, () -> put(a, 0, 2));
        assertEquals(RemoteAccessException.Reason.REGION_CLOSED, e.reason());
    }

    @Test
    void noOperationReachesARegionWhoseCloseReturned() throws Exception {
        long seed = Long.getLong("fenceline.test.seed", 20261203L);
        System.out.println("RegistrationTableLookupTest seed " + seed);
        SplittableRandom random = new SplittableRandom(seed);
        int n = 500;
        MemoryRegion[] regions = new MemoryRegion[n];
        for (int i = 0; i < n; i++) {
            regions[i] = table.allocate(64);
        }
        int[] order = new int[n]; // the closing thread's order, a shuffle from the seed
        for (int i = 0; i < n; i++) {
            order[i] = i;
        }
        for (int i = n - 1; i > 0; i--) {
            int j = random.nextInt(i + 1);
            int t = order[i];
            order[i] = order[j];
            order[j] = t;
        }
        int[] place = new int[n];
        for (int i = 0; i < n; i++) {
            place[order[i]] = i;
        }
        AtomicInteger closed = new AtomicInteger(); // counted after each close returned
        AtomicReference<Throwable> failure = new AtomicReference<>();
        SplittableRandom targetRandom = random.split();
        Thread target = new Thread(() -> {
            try {
                int ops = 0;
                while (closed.get() < n || ops < 10_000) {
                    // Runs of operations on one region, mostly the next to close.
                    int i = targetRandom.nextBoolean() ? order[Math.min(closed.get(), n - 1)] : targetRandom.nextInt(n);
                    for (int k = 0, run = 1 + targetRandom.nextInt(20); k < run; k++, ops++) {
                        boolean closedBefore = place[i] < closed.get();
                        try {
                            put(regions[i], 8, i);
                            if (closedBefore) {
                                throw new AssertionError("a put reached region " + i + " after its close returned (seed "
                                        + seed + ")");
                            }
                        } catch (RemoteAccessException e) {
                            if (e.reason() != RemoteAccessException.Reason.REGION_CLOSED) {
                                throw new AssertionError("region " + i + ": " + e + " (seed " + seed + ")", e);
                            }
                        }
                    }
                }
            } catch (Throwable t) {
                failure.set(t);
            }
        }, "registration-lookup-target");
        target.start();
        for (int i = 0; i < n; i++) {
            regions[order[i]].close();
            closed.incrementAndGet();
            if (random.nextInt(4) == 0) {
                Thread.yield();
            }
        }
        target.join(TimeUnit.SECONDS.toMillis(50));
        assertTrue(!target.isAlive(), "the target thread did not finish (seed " + seed + ")");
        if (failure.get() != null) {
            throw new AssertionError(failure.get().getMessage(), failure.get());
        }
        assertEquals(0, table.openRegions());
    }
}
