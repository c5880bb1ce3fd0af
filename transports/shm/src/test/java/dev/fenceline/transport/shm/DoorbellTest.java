package dev.fenceline.transport.shm;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.nio.ByteBuffer;
import java.util.Random;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import org.agrona.concurrent.UnsafeBuffer;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * The polling thread's doorbell on a real futex. Sleeps are bounded by far more than a test may
 * take (ten minutes), so a lost ring shows as a test that does not finish in time, never as a slow
 * pass; nothing here asserts how fast a wake-up is.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class DoorbellTest {
    private static final long NEVER = TimeUnit.MINUTES.toNanos(10);

    @BeforeAll
    static void futexes() {
        assumeTrue(Doorbell.available(), () -> "no futexes here: " + Futex.unavailable());
    }

    private static UnsafeBuffer header() {
        return new UnsafeBuffer(ByteBuffer.allocateDirect(Inbox.HEADER));
    }

    @Test
    void aRingWithNobodyAsleepMovesNothing() {
        UnsafeBuffer h = header();
        Doorbell d = new Doorbell(h);
        d.ring();
        d.ring();
        assertEquals(0, h.getIntVolatile(Doorbell.BELL), "no sleeper: no bell, no system call");
        assertEquals(0, h.getIntVolatile(Doorbell.ASLEEP));
    }

    @Test
    void aRingBetweenArmingAndSleepingEndsTheSleepBeforeItStarts() {
        UnsafeBuffer h = header();
        Doorbell d = new Doorbell(h);
        int armed = d.arm();
        assertEquals(1, h.getIntVolatile(Doorbell.ASLEEP));
        d.ring(); // the producer came after the last look
        assertEquals(armed + 1, h.getIntVolatile(Doorbell.BELL));
        assertEquals(0, h.getIntVolatile(Doorbell.ASLEEP), "the first ring takes the flag down");
        d.ring();
        assertEquals(armed + 1, h.getIntVolatile(Doorbell.BELL), "later rings need no system call");
        d.sleep(armed, NEVER); // returns at once: the bell moved past what was armed
        d.disarm();
    }

    @Test
    void aRingWakesASleeper() throws Exception {
        UnsafeBuffer h = header();
        Doorbell d = new Doorbell(h);
        CountDownLatch armed = new CountDownLatch(1);
        CountDownLatch woke = new CountDownLatch(1);
        Thread sleeper = new Thread(() -> {
            int value = d.arm();
            armed.countDown();
            d.sleep(value, NEVER);
            d.disarm();
            woke.countDown();
        }, "doorbell-sleeper");
        sleeper.setDaemon(true);
        sleeper.start();
        assertTrue(armed.await(10, TimeUnit.SECONDS));
        // Whether the sleeper is in its sleep yet or about to enter it, the ring ends it.
        new Doorbell(h).ring(); // a producer's own view of the same header, as a peer process has
        assertTrue(woke.await(30, TimeUnit.SECONDS), "the ring woke the sleeper (its own bound is ten minutes)");
    }

    /**
     * A consumer that sleeps whenever its queue is empty and a producer that rings after every
     * item, each pausing at random (seed printed): every item is taken, none waits for a bound.
     */
    @Test
    void noRingIsLostUnderRandomSchedules() throws Exception {
        long seed = Long.getLong("fenceline.test.seed", System.nanoTime());
        System.out.println("DoorbellTest seed " + seed + " (-Dfenceline.test.seed to repeat)");
        UnsafeBuffer h = header();
        Doorbell consumerSide = new Doorbell(h);
        Doorbell producerSide = new Doorbell(h);
        ConcurrentLinkedQueue<Integer> queue = new ConcurrentLinkedQueue<>();
        int items = 20_000;
        AtomicReference<Throwable> failure = new AtomicReference<>();
        CountDownLatch done = new CountDownLatch(1);
        int[] sleeps = new int[1];
        Thread consumer = new Thread(() -> {
            Random r = new Random(seed ^ 1);
            try {
                int next = 0;
                while (next < items) {
                    Integer i = queue.poll();
                    if (i != null) {
                        assertEquals(next, i.intValue(), "in order");
                        next++;
                        continue;
                    }
                    int armed = consumerSide.arm();
                    if (r.nextInt(4) == 0) {
                        Thread.onSpinWait(); // widen the window between arming and the last look
                    }
                    if (queue.isEmpty()) {
                        sleeps[0]++;
                        consumerSide.sleep(armed, NEVER);
                    }
                    consumerSide.disarm();
                }
            } catch (Throwable t) {
                failure.set(t);
            } finally {
                done.countDown();
            }
        }, "doorbell-consumer");
        consumer.setDaemon(true);
        consumer.start();
        Random r = new Random(seed);
        for (int i = 0; i < items; i++) {
            queue.add(i);
            producerSide.ring();
            int pause = r.nextInt(16);
            if (pause == 0) {
                Thread.sleep(0, 1000 * r.nextInt(50));
            } else if (pause < 4) {
                Thread.yield();
            }
        }
        assertTrue(done.await(60, TimeUnit.SECONDS), "the consumer took everything (a lost ring leaves it"
                + " asleep for ten minutes); slept " + sleeps[0] + " times");
        assertEquals(null, failure.get());
        assertTrue(sleeps[0] > 0, "the consumer did sleep on the doorbell");
    }
}
