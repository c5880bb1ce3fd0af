package dev.fenceline.transport.tcp;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.ByteBuffer;
import java.util.Random;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** ReplyRing: power-of-two capacity, FIFO order, refusal when full, sinks dropped on pop, one producer and one consumer. */
class ReplyRingTest {
    private static final long SEED = 20240611L;

    @Test
    void capacityRoundsUpToAPowerOfTwo() {
        int[][] cases = {{1, 2}, {2, 2}, {3, 4}, {4, 4}, {5, 8}, {1000, 1024}, {1024, 1024}, {1025, 2048},
            {65536, 65536}};
        for (int[] c : cases) {
            assertEquals(c[1], new ReplyRing(c[0]).capacity(), "capacity " + c[0]);
        }
    }

    @Test
    void firstInFirstOutAcrossWraps() {
        ReplyRing ring = new ReplyRing(4);
        ByteBuffer sink = ByteBuffer.allocate(1);
        long next = 0;
        for (long token = 0; token < 50; token++) {
            assertTrue(ring.offer(token, (byte) (token % 3), (int) token * 10, token % 2 == 0 ? sink : null));
            if (token % 3 == 2) { // leave some entries outstanding, so the ring wraps with content
                for (; next < token; next++) {
                    assertEquals(next, ring.token());
                    assertEquals((byte) (next % 3), ring.kind());
                    assertEquals((int) next * 10, ring.payload());
                    assertSame(next % 2 == 0 ? sink : null, ring.sink());
                    ring.pop();
                }
                assertEquals(1, ring.size());
            }
        }
    }

    @Test
    void fullRingRefusesUntilPopped() {
        ReplyRing ring = new ReplyRing(3);
        for (int i = 0; i < 4; i++) {
            assertTrue(ring.offer(i, ReplyRing.OP, 0, null));
        }
        assertFalse(ring.offer(99, ReplyRing.GET, 0, null));
        assertEquals(4, ring.size());
        ring.pop();
        assertTrue(ring.offer(4, ReplyRing.FLUSH, 0, null));
        assertFalse(ring.offer(99, ReplyRing.GET, 0, null));
        for (int i = 1; i <= 4; i++) {
            assertEquals(i, ring.token(), "the refused entries were not stored");
            ring.pop();
        }
        assertTrue(ring.isEmpty());
    }

    @Test
    void popDropsTheSink() {
        ReplyRing ring = new ReplyRing(2);
        ring.offer(1, ReplyRing.GET, 8, ByteBuffer.allocate(8));
        ring.offer(2, ReplyRing.GET, 8, ByteBuffer.allocate(8));
        ring.pop();
        ring.pop();
        // The head is back on the first slot: its caller's buffer must no longer be referenced.
        assertTrue(ring.isEmpty());
        assertNull(ring.sink());
    }

    @Test
    @Timeout(value = 60, threadMode = Timeout.ThreadMode.SEPARATE_THREAD) // a lost entry would spin forever
    void oneProducerOneConsumer() throws Exception {
        int n = 1_000_000;
        System.out.println("ReplyRingTest seed " + SEED);
        Random rnd = new Random(SEED);
        int[] payloads = new int[n];
        byte[] sinkOf = new byte[n];
        for (int i = 0; i < n; i++) {
            payloads[i] = rnd.nextInt();
            sinkOf[i] = (byte) rnd.nextInt(4); // 3 means no sink
        }
        ByteBuffer[] sinks = {ByteBuffer.allocate(1), ByteBuffer.allocate(2), ByteBuffer.allocate(3), null};
        ReplyRing ring = new ReplyRing(64);
        AtomicReference<String> failure = new AtomicReference<>();
        Thread consumer = new Thread(() -> {
            for (int i = 0; i < n && failure.get() == null; i++) {
                while (ring.isEmpty()) {
                    if (failure.get() != null) {
                        return;
                    }
                    Thread.onSpinWait();
                }
                if (ring.token() != i || ring.kind() != (byte) (i % 3) || ring.payload() != payloads[i]
                        || ring.sink() != sinks[sinkOf[i]]) {
                    failure.compareAndSet(null, "seed " + SEED + ": entry " + i + " read as token " + ring.token()
                            + ", kind " + ring.kind() + ", payload " + ring.payload());
                }
                ring.pop();
            }
        }, "reply-ring-consumer");
        consumer.setDaemon(true);
        consumer.start();
        for (int i = 0; i < n && failure.get() == null; i++) {
            while (!ring.offer(i, (byte) (i % 3), payloads[i], sinks[sinkOf[i]]) && consumer.isAlive()) {
                Thread.onSpinWait();
            }
        }
        consumer.join();
        assertNull(failure.get());
        assertTrue(ring.isEmpty());
    }
}
