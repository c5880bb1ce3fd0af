package dev.fenceline.testkit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTimeoutPreemptively;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Chaos over many seeds: {@code -Dfenceline.chaos.seeds=N} (200 by default, 10000 for a long run),
 * {@code -Dfenceline.chaos.first=S} to start elsewhere. A failing seed prints the command that runs
 * its case again (its workloads and faults; the threads' timing is the machine's).
 */
class ChaosTest {
    /**
     * What a seed may take on average before the run counts as hung: a seed takes about 0.4 s on
     * two vCPUs, so a fixed bound would cut a long run short (10,000 seeds take about an hour).
     */
    private static final Duration PER_SEED = Duration.ofMillis(1500);
    /** Seeds between two progress lines of a long run. */
    private static final int PROGRESS_EVERY = 500;

    @Test
    void everySeedHolds() throws Exception {
        int seeds = Integer.getInteger("fenceline.chaos.seeds", 200);
        long first = Long.getLong("fenceline.chaos.first", 1);
        Duration bound = Duration.ofMinutes(2).plus(PER_SEED.multipliedBy(seeds));
        AtomicLong running = new AtomicLong(first);
        assertTimeoutPreemptively(bound, () -> holds(seeds, first, running), () -> seeds + " chaos seeds from "
                + first + " did not finish within " + bound.toSeconds() + " s; seed " + running.get() + " was running");
    }

    /** @param running the seed being run, for the message of a run that timed out */
    private static void holds(int seeds, long first, AtomicLong running) throws Exception {
        List<String> failed = new ArrayList<>();
        long reconfigurations = 0;
        long restarts = 0;
        long direct = 0;
        long stalls = 0;
        for (long seed = first; seed < first + seeds; seed++) {
            running.set(seed);
            ChaosRun.Report r = ChaosRun.run(new ChaosRun.Options(seed, 800, 12, 2, seed % 2 == 0 ? "endpoint"
                    : "strong"));
            reconfigurations += r.stats().reconfigurations();
            restarts += r.stats().restarts();
            direct += r.stats().direct();
            stalls += r.stalls();
            if (!r.ok()) {
                String line = "seed " + seed + ": " + r.errors() + "\n  reproduce: " + r.reproduce();
                System.out.println(line);
                failed.add(line);
            }
            long done = seed - first + 1;
            if (done % PROGRESS_EVERY == 0 && done < seeds) {
                System.out.printf("chaos: %d of %d seeds from %d, %d failed%n", done, seeds, first, failed.size());
            }
        }
        System.out.printf("chaos: %d seeds from %d, %d reconfigurations (%d of them stalled targets given up),"
                + " %d restarts, %d operations on the fast path%n", seeds, first, reconfigurations, stalls, restarts,
                direct);
        assertEquals(List.of(), failed);
        assertTrue(direct > 0, "the fast path by grant ran under chaos");
        assertTrue(reconfigurations >= seeds * 4L, "the schedule really changed lanes: " + reconfigurations);
        assertTrue(restarts > 0, "some requests were restarted");
        assertTrue(stalls > 0, "some targets stalled and resumed after their lane was given up");
    }

    @Test
    @Timeout(value = 60, unit = TimeUnit.SECONDS)
    void theChecksCatchALostFence() throws Exception {
        // The same machinery must be able to fail: a workload without fences diverges from its model.
        try (dev.fenceline.Fenceline f = dev.fenceline.Fenceline.create(SimConfigs.of(SimConfigs.TWO_LANES_REORDERING, "endpoint", 3))) {
            var a = f.newWorker("a").toCompletableFuture().get(10, TimeUnit.SECONDS);
            var b = f.newWorker("b").toCompletableFuture().get(10, TimeUnit.SECONDS);
            var data = b.allocate(256 * 1024);
            var counters = b.allocate(64);
            var ep = a.connect(b.address()).toCompletableFuture().get(10, TimeUnit.SECONDS);
            var w = new ModelCheckedWorkload(ep, new ModelCheckedWorkload.Options(data, data.remoteKey(), 0,
                    256 * 1024, counters, counters.remoteKey(), 0, 8, 9, 3, 256, false));
            b.setActiveMessageHandler(9, w.activeMessageHandler());
            assertTrue(!w.run(4000).ok(), "an unfenced workload on reordering lanes must fail its checks");
        }
    }
}
