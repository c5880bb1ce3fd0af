package dev.fenceline.transport.shm;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.SplittableRandom;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;

/**
 * The polling thread's lane lookup keeps the last lane it found: once a lane's removal has
 * returned, no lookup may find it, however recently it was found. The race test's seed is printed.
 */
class ShmLaneTableTest {

    private static ShmLane lane(long conn) {
        return new ShmLane(null, conn, 0, null, 16, 1024, false); // only its id is asked for
    }

    @Test
    void aRemovedLaneIsNotFoundEvenRightAfterItWasFound() {
        ShmLaneTable table = new ShmLaneTable();
        ShmLane a = lane(7);
        ShmLane b = lane(9);
        table.add(a);
        table.add(b);
        assertSame(a, table.find(7));
        assertSame(a, table.find(7)); // the shortcut
        assertSame(b, table.find(9));
        assertNull(table.find(8));
        assertSame(a, table.find(7));
        table.remove(a);
        assertNull(table.find(7), "the lane last found was removed");
        assertSame(b, table.find(9));
        ShmLane again = lane(7); // a later lane under the same id
        table.add(again);
        assertSame(again, table.find(7));
        assertEquals(2, table.all().size());
    }

    @Test
    void removingAStaleLaneUnderTheSameIdLeavesTheListedOne() {
        ShmLaneTable table = new ShmLaneTable();
        ShmLane listed = lane(5);
        table.add(listed);
        assertSame(listed, table.find(5)); // the one the shortcut holds
        table.remove(lane(5)); // a stale copy: the listed one stays
        assertSame(listed, table.find(5));
        assertThrows(IllegalStateException.class, () -> table.add(lane(5)), "an id is never listed twice");
        assertSame(listed, table.find(5));
    }

    @Test
    void noLookupFindsALaneWhoseRemovalReturned() throws Exception {
        long seed = Long.getLong("fenceline.test.seed", 20261203L);
        System.out.println("ShmLaneTableTest seed " + seed);
        SplittableRandom random = new SplittableRandom(seed);
        int n = 2_000;
        ShmLaneTable table = new ShmLaneTable();
        ShmLane[] lanes = new ShmLane[n];
        for (int i = 0; i < n; i++) {
            lanes[i] = lane(1_000_000L + i * 7919L);
            table.add(lanes[i]);
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
        int[] place = new int[n]; // where each lane is in the closing order
        for (int i = 0; i < n; i++) {
            place[order[i]] = i;
        }
        AtomicInteger removed = new AtomicInteger(); // counted after each removal returned
        AtomicReference<Throwable> failure = new AtomicReference<>();
        SplittableRandom pollerRandom = random.split();
        Thread poller = new Thread(() -> {
            try {
                int lookups = 0;
                while (removed.get() < n || lookups < 10_000) {
                    // Runs of lookups of one lane, as answers come: the shortcut is what is tried,
                    // mostly on the lane whose removal comes next.
                    int i = pollerRandom.nextBoolean() ? order[Math.min(removed.get(), n - 1)] : pollerRandom.nextInt(n);
                    for (int k = 0, run = 1 + pollerRandom.nextInt(20); k < run; k++, lookups++) {
                        boolean removedBefore = place[i] < removed.get();
                        ShmLane found = table.find(lanes[i].conn);
                        if (removedBefore && found != null) {
                            throw new AssertionError("found lane " + i + " after its removal returned (seed " + seed + ")");
                        }
                        if (found != null && found != lanes[i]) {
                            throw new AssertionError("found another lane for lane " + i + "'s id (seed " + seed + ")");
                        }
                    }
                }
            } catch (Throwable t) {
                failure.set(t);
            }
        }, "shm-lane-table-poller");
        poller.start();
        for (int i = 0; i < n; i++) {
            table.remove(lanes[order[i]]);
            removed.incrementAndGet();
            if (random.nextInt(4) == 0) {
                Thread.yield(); // let the poller run between removals too
            }
        }
        poller.join(60_000);
        assertTrue(!poller.isAlive(), "the poller did not finish (seed " + seed + ")");
        if (failure.get() != null) {
            throw new AssertionError(failure.get().getMessage(), failure.get());
        }
        assertTrue(table.all().isEmpty());
        for (ShmLane l : lanes) {
            assertNull(table.find(l.conn));
        }
    }
}
