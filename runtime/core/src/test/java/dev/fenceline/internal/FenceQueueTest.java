package dev.fenceline.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import java.util.concurrent.TimeUnit;

@Timeout(value = 60, unit = TimeUnit.SECONDS)
class FenceQueueTest {
    private record R(String name, long epoch) {
    }

    @Test
    void orderedByEpochFifoWithinAnEpoch() {
        FenceQueue<R> q = new FenceQueue<>(R::epoch);
        R a = new R("2a", 2);
        R b = new R("1", 1);
        R c = new R("2b", 2);
        q.add(a);
        q.add(b);
        q.add(c);
        assertEquals(List.of(b, a, c), q.snapshot());
        assertEquals(3, q.maxDepth());
    }

    @Test
    void pushFrontRestoresTheHead() {
        FenceQueue<R> q = new FenceQueue<>(R::epoch);
        R a = new R("a", 1);
        R b = new R("b", 1);
        q.add(a);
        q.add(b);
        R head = q.poll();
        q.pushFront(head);
        assertEquals(List.of(a, b), q.snapshot());
    }

    @Test
    void removeAllEmptiesInOrder() {
        FenceQueue<R> q = new FenceQueue<>(R::epoch);
        q.add(new R("x", 3));
        q.add(new R("y", 1));
        assertEquals(List.of(new R("y", 1), new R("x", 3)), q.removeAll());
        assertTrue(q.isEmpty());
        assertNull(q.poll());
        assertNull(q.peek());
    }
}
