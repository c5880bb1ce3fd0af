package dev.fenceline.transport.shm;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicIntegerArray;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** The lock-free slot allocator behind gates and key-table slots. */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class SlotPoolTest {
    @Test
    void takesTheLowestFreeSlotAndNoMoreThanItHas() {
        SlotPool p = new SlotPool(70); // two words, the second partly spare
        for (int i = 0; i < 70; i++) {
            assertEquals(i, p.take());
        }
        assertEquals(-1, p.take(), "the spare bits of the last word are not slots");
        assertEquals(70, p.taken());
        p.release(65);
        p.release(3);
        assertEquals(3, p.take());
        assertEquals(65, p.take());
        assertEquals(-1, p.take());
    }

    @Test
    void givingBackASlotNotTakenIsRefusedByNumber() {
        SlotPool p = new SlotPool(8);
        IllegalStateException twice = assertThrows(IllegalStateException.class, () -> p.release(2));
        assertTrue(twice.getMessage().contains("slot 2 is not taken"), twice.getMessage());
        IllegalArgumentException outside = assertThrows(IllegalArgumentException.class, () -> p.release(8));
        assertTrue(outside.getMessage().contains("slot 8 is not one of the 8 slots"), outside.getMessage());
        assertThrows(IllegalArgumentException.class, () -> new SlotPool(0));
    }

    /** Threads take and give back at random; no slot is ever held by two at once, and none is lost. */
    @Test
    void concurrentTakersNeverShareASlot() throws Exception {
        long seed = Long.getLong("fenceline.test.seed", System.nanoTime());
        System.out.println("SlotPoolTest seed " + seed + " (reproduce: -Dfenceline.test.seed=" + seed + ")");
        int slots = 100;
        SlotPool p = new SlotPool(slots);
        AtomicIntegerArray holders = new AtomicIntegerArray(slots);
        AtomicReference<String> broken = new AtomicReference<>();
        int threads = 4;
        CountDownLatch go = new CountDownLatch(1);
        List<Thread> all = new ArrayList<>();
        for (int t = 0; t < threads; t++) {
            Random r = new Random(seed + t);
            Thread th = new Thread(() -> {
                List<Integer> mine = new ArrayList<>();
                try {
                    go.await();
                } catch (InterruptedException e) {
                    return;
                }
                for (int i = 0; i < 200_000 && broken.get() == null; i++) {
                    if (mine.isEmpty() || (r.nextBoolean() && mine.size() < 40)) {
                        int s = p.take();
                        if (s >= 0) {
                            if (holders.getAndIncrement(s) != 0) {
                                broken.compareAndSet(null, "slot " + s + " handed out twice");
                            }
                            mine.add(s);
                        }
                    } else {
                        int s = mine.remove(r.nextInt(mine.size()));
                        holders.decrementAndGet(s);
                        p.release(s);
                    }
                }
                for (int s : mine) {
                    holders.decrementAndGet(s);
                    p.release(s);
                }
            });
            all.add(th);
            th.start();
        }
        go.countDown();
        for (Thread th : all) {
            th.join();
        }
        assertEquals(null, broken.get());
        assertEquals(0, p.taken(), "every slot given back");
        for (int i = 0; i < slots; i++) {
            assertEquals(i, p.take());
        }
    }
}
