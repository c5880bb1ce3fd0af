package dev.fenceline.spi.support;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * The process's one heartbeat thread counts every worker's count; one that throws (its memory
 * faulted) is counted no more, and the others go on beating.
 */
@Timeout(value = 30, unit = TimeUnit.SECONDS)
class HeartbeatTest {
    @Test
    void aCountThatThrowsStopsAloneAndTheOthersBeatOn() throws Exception {
        AtomicInteger faulty = new AtomicInteger();
        AtomicInteger healthy = new AtomicInteger();
        Heartbeat.Beating bad = () -> {
            if (faulty.incrementAndGet() >= 2) { // the first beat is start()'s own, on this thread
                throw new InternalError("test: a fault occurred in a recent unsafe memory access operation");
            }
        };
        Heartbeat.Beating good = healthy::incrementAndGet;
        Heartbeat.start(bad);
        Heartbeat.start(good);
        try {
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
            while (faulty.get() < 2) {
                assertTrue(System.nanoTime() < deadline, "the heartbeat thread never beat the count");
                Thread.sleep(5);
            }
            int after = healthy.get();
            while (healthy.get() < after + 5) {
                assertTrue(System.nanoTime() < deadline, "the other counts stopped with the one that threw: "
                        + healthy.get());
                Thread.sleep(5);
            }
            assertEquals(2, faulty.get(), "the count that threw was beaten no more");
        } finally {
            Heartbeat.stop(bad);
            Heartbeat.stop(good);
        }
    }
}
