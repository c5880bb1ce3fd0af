package dev.fenceline.perf;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.netty.channel.EventLoopGroup;
import io.netty.channel.epoll.Epoll;
import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * The raw Netty floor measures in the mode the run's threads are in: its event loops spin beside
 * spinning threads (a sleeping loop measures how fast an idle CPU wakes) and sleep otherwise.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class RawNettyBaselineTest {
    /** Where Netty's native epoll jar serves (Linux on x86_64) it must load: a skip would hide that. */
    private static void assumeEpoll() {
        assumeTrue(System.getProperty("os.name").equals("Linux") && System.getProperty("os.arch").equals("amd64"),
                "native epoll is shipped for Linux on x86_64 only");
        assertTrue(Epoll.isAvailable(), () -> "native epoll did not load: " + Epoll.unavailabilityCause());
    }

    @Test
    void spinningLoopsBurnTheirCpuWhileIdleAndSleepingOnesDoNot() throws Exception {
        assumeEpoll();
        ThreadMXBean threads = ManagementFactory.getThreadMXBean();
        assumeTrue(threads.isThreadCpuTimeSupported(), "no per-thread CPU time on this JVM");
        try (RawNettyBaseline spinning = new RawNettyBaseline("", true);
                RawNettyBaseline sleeping = new RawNettyBaseline("", false)) {
            assertEquals("raw-netty-spin", spinning.label());
            assertEquals("raw-netty", sleeping.label());
            long[] spinIds = loopThreads(spinning);
            long[] sleepIds = loopThreads(sleeping);
            long[] spinBefore = cpu(threads, spinIds);
            long[] sleepBefore = cpu(threads, sleepIds);
            long start = System.nanoTime();
            TimeUnit.MILLISECONDS.sleep(400);
            long wall = System.nanoTime() - start;
            long[] spinAfter = cpu(threads, spinIds);
            long[] sleepAfter = cpu(threads, sleepIds);
            long spun = spinAfter[0] - spinBefore[0] + spinAfter[1] - spinBefore[1];
            long slept = sleepAfter[0] - sleepBefore[0] + sleepAfter[1] - sleepBefore[1];
            // Two spinning loops on a machine of at least two CPUs: together at least a fifth of the
            // wall time even when shared; two sleeping ones well under a twentieth of it.
            assertTrue(spun > wall / 5, "spinning loops used " + spun / 1_000_000 + " ms of CPU in "
                    + wall / 1_000_000 + " ms");
            assertTrue(slept < wall / 20, "sleeping loops used " + slept / 1_000_000 + " ms of CPU in "
                    + wall / 1_000_000 + " ms");
        }
    }

    @Test
    void bothModesMeasureAStreamAndAPingPong() throws Exception {
        assumeEpoll(); // without it both would sleep
        for (boolean spin : new boolean[] {true, false}) {
            try (RawNettyBaseline raw = new RawNettyBaseline("", spin)) {
                Progress progress = new Progress();
                PerfResult stream = raw.stream(64, 2_000, progress);
                assertEquals("stream_bw", stream.test());
                assertEquals(raw.label(), stream.transport());
                assertEquals(2_000, progress.get(), "the stream counts what it sent");
                assertTrue(stream.bytesPerSecond() > 0, stream.text());
                PerfResult pong = raw.pingPong(8, 500, progress);
                assertEquals("pingpong_lat", pong.test());
                assertEquals(raw.label(), pong.transport());
                assertEquals(500, progress.get(), "every ping answered");
                assertTrue(pong.p50Micros() > 0 && pong.p99Micros() >= pong.p50Micros(), pong.text());
            }
        }
    }

    /** @return the ids of the baseline's two event loop threads (server, client) */
    private static long[] loopThreads(RawNettyBaseline raw) throws Exception {
        EventLoopGroup[] groups = raw.loops();
        long[] ids = new long[groups.length];
        for (int i = 0; i < groups.length; i++) {
            ids[i] = groups[i].submit(() -> Thread.currentThread().getId()).get(10, TimeUnit.SECONDS);
        }
        return ids;
    }

    private static long[] cpu(ThreadMXBean threads, long[] ids) {
        long[] t = new long[ids.length];
        for (int i = 0; i < ids.length; i++) {
            t[i] = threads.getThreadCpuTime(ids[i]);
            assertTrue(t[i] >= 0, "no CPU time for thread " + ids[i]);
        }
        return t;
    }
}
