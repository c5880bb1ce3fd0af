package dev.fenceline.testkit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** The watchdog reports a stall once, with the step and every thread's stack, and a beat re-arms it. */
@Timeout(value = 30, unit = TimeUnit.SECONDS)
class StallWatchdogTest {
    @Test
    void aStallIsReportedOnceWithItsStepAndTheStacks() throws Exception {
        ByteArrayOutputStream bytes = new ByteArrayOutputStream();
        PrintStream out = new PrintStream(bytes, true, StandardCharsets.UTF_8);
        CountDownLatch parked = new CountDownLatch(1);
        Thread stuck = new Thread(() -> {
            parked.countDown();
            try {
                Thread.sleep(60_000);
            } catch (InterruptedException e) {
                // let go
            }
        }, "the-stuck-one");
        stuck.setDaemon(true);
        stuck.start();
        parked.await();
        try (StallWatchdog dog = StallWatchdog.start("unit", Duration.ofMillis(100), out)) {
            dog.beat("step one");
            // Real time on purpose: the watchdog watches wall-clock progress. Wait for the report
            // rather than for a fixed time, then long enough that a second report would have come.
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
            while (!bytes.toString(StandardCharsets.UTF_8).contains("STALL") && System.nanoTime() < deadline) {
                Thread.sleep(20);
            }
            Thread.sleep(400);
            String report = bytes.toString(StandardCharsets.UTF_8);
            assertTrue(report.startsWith("STALL unit at "), report);
            assertTrue(report.contains("in step step one"), report);
            assertTrue(report.contains("\"the-stuck-one\" TIMED_WAITING"), report);
            assertEquals(1, report.split("STALL ", -1).length - 1, "one report per stall: " + report);
            dog.beat("step two");
            deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
            while (!bytes.toString(StandardCharsets.UTF_8).contains("in step step two") && System.nanoTime() < deadline) {
                Thread.sleep(20);
            }
            assertTrue(bytes.toString(StandardCharsets.UTF_8).contains("in step step two"), "a beat re-arms it");
        } finally {
            stuck.interrupt();
        }
    }
}
