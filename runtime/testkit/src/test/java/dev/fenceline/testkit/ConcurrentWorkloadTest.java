package dev.fenceline.testkit;

import static org.junit.jupiter.api.Assertions.assertEquals;

import dev.fenceline.Endpoint;
import dev.fenceline.Fenceline;
import dev.fenceline.MemoryRegion;
import dev.fenceline.Worker;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * Several user threads interleave puts, gets, atomics, active messages, fences and flushes on one
 * endpoint; each thread's slice of the target is checked against its own sequential model. The
 * seed is printed; rerun a failure with {@code -Dfenceline.test.seed=S}.
 */
@Timeout(value = 180, unit = TimeUnit.SECONDS)
class ConcurrentWorkloadTest {
    private static final int THREADS = 4;
    private static final int SLICE = 64 * 1024;
    private static final int COUNTERS_PER_THREAD = 8;

    @ParameterizedTest(name = "{0}, mode {1}")
    @CsvSource({"two-lanes, endpoint", "two-lanes, strong", "one-lane, endpoint"})
    void threadsSharingAnEndpointEachSeeTheirModel(String lanes, String mode) throws Exception {
        long seed = Long.getLong("fenceline.test.seed", 20261129L);
        int ops = Integer.getInteger("fenceline.test.ops", 1500);
        System.out.printf("ConcurrentWorkloadTest %s/%s seed %d ops %d: reproduce with mvn -pl runtime/testkit test"
                + " -Dtest=ConcurrentWorkloadTest -Dfenceline.test.seed=%d%n", lanes, mode, seed, ops, seed);
        try (Fenceline f = Fenceline.create(SimConfigs.of(SimConfigs.lanes(lanes), mode, seed))) {
            Worker a = f.newWorker("origin").toCompletableFuture().get(10, TimeUnit.SECONDS);
            Worker b = f.newWorker("target").toCompletableFuture().get(10, TimeUnit.SECONDS);
            MemoryRegion data = b.allocate((long) THREADS * SLICE);
            MemoryRegion counters = b.allocate(THREADS * COUNTERS_PER_THREAD * 8L);
            Endpoint ep = a.connect(b.address()).toCompletableFuture().get(10, TimeUnit.SECONDS);
            List<ModelCheckedWorkload> workloads = new ArrayList<>();
            for (int t = 0; t < THREADS; t++) {
                ModelCheckedWorkload w = new ModelCheckedWorkload(ep, new ModelCheckedWorkload.Options(
                        data, data.remoteKey(), t * SLICE, SLICE, counters, counters.remoteKey(),
                        t * COUNTERS_PER_THREAD, COUNTERS_PER_THREAD, 100 + t, seed * 31 + t, 32, true));
                b.setActiveMessageHandler(100 + t, w.activeMessageHandler());
                workloads.add(w);
            }
            ExecutorService pool = Executors.newFixedThreadPool(THREADS);
            try {
                List<Future<ModelCheckedWorkload.Result>> results = new ArrayList<>();
                for (ModelCheckedWorkload w : workloads) {
                    results.add(pool.submit(() -> w.run(ops)));
                }
                List<String> errors = new ArrayList<>();
                for (Future<ModelCheckedWorkload.Result> r : results) {
                    errors.addAll(r.get(150, TimeUnit.SECONDS).errors());
                }
                assertEquals(List.of(), errors, "seed " + seed);
            } finally {
                pool.shutdownNow();
            }
            var stats = a.statistics();
            assertEquals(0, stats.outstanding(), stats.toString());
            assertEquals(0, stats.failed(), stats.toString());
            WorkerTotalsAssert.assertCountsItsOnlyEndpoint(stats, ep.statistics());
        }
    }
}
