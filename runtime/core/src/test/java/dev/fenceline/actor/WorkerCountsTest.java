package dev.fenceline.actor;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;

import dev.fenceline.FencelineException;
import dev.fenceline.WorkerAddress;
import dev.fenceline.actor.EndpointCounters.Counter;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.UUID;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * A worker's running totals against the sum of its endpoints' own counters, after every kind of
 * count from several threads at once (the actor's under a lock per endpoint, as an actor's runs are
 * ordered). The seed is printed; rerun a failure with {@code -Dfenceline.test.seed=S}.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class WorkerCountsTest {
    private static final Counter[] COUNTERS = Counter.values();
    /** What the actor increments: every counter but the maximum, which it only raises. */
    private static final Counter[] SUMS = java.util.Arrays.stream(COUNTERS)
            .filter(c -> c != Counter.MAX_FENCE_QUEUE_DEPTH).toArray(Counter[]::new);

    @Test
    void theWorkersTotalsAreTheSumOfItsEndpointsCountsEveryOneOfThem() throws Exception {
        long seed = Long.getLong("fenceline.test.seed", 20261207L);
        System.out.printf("WorkerCountsTest seed %d: reproduce with -Dfenceline.test.seed=%d%n", seed, seed);
        WorkerCounts worker = WorkerCounts.create();
        WorkerAddress peer = new WorkerAddress(UUID.randomUUID(), "peer", Map.of());
        List<EndpointChannel> endpoints = new ArrayList<>();
        for (int i = 0; i < 3; i++) {
            endpoints.add(new EndpointChannel("e" + i, peer, LaneEvents.NONE, worker));
        }
        int threads = 4;
        CyclicBarrier start = new CyclicBarrier(threads);
        AtomicReference<Throwable> failed = new AtomicReference<>();
        List<Thread> all = new ArrayList<>();
        for (int t = 0; t < threads; t++) {
            Random random = new Random(seed * 31 + t);
            Thread th = new Thread(() -> {
                try {
                    start.await();
                    for (int i = 0; i < 20_000; i++) {
                        count(endpoints.get(random.nextInt(endpoints.size())), random);
                    }
                } catch (Throwable e) {
                    failed.compareAndSet(null, e);
                }
            });
            all.add(th);
            th.start();
        }
        for (Thread th : all) {
            th.join();
        }
        assertNull(failed.get(), "a counting thread failed");
        assertAgree(worker, endpoints, seed);
        // The threads have ended: a new one's first count folds their rows and cells, and loses none.
        Thread late = new Thread(() -> count(endpoints.get(0), new Random(seed)));
        late.start();
        late.join();
        assertAgree(worker, endpoints, seed);
    }

    /** One count of a random kind, as the actor, the fast path, a posting thread or a lane makes it. */
    private static void count(EndpointChannel e, Random random) {
        switch (random.nextInt(9)) {
            case 0 -> {
                synchronized (e) { // the actor's runs are ordered
                    e.counters().increment(SUMS[random.nextInt(SUMS.length)]);
                }
            }
            case 1 -> {
                synchronized (e) {
                    e.counters().max(Counter.MAX_FENCE_QUEUE_DEPTH, random.nextInt(1_000));
                }
            }
            case 2 -> e.fast().operation();
            case 3 -> e.fast().failure();
            case 4 -> e.fast().flush();
            case 5 -> e.direct().answers.queued();
            case 6 -> e.direct().answers.answered(0, random.nextBoolean() ? null : new FencelineException("refused"));
            case 7 -> {
                if (random.nextBoolean()) {
                    e.direct().postedCounted(random.nextBoolean());
                } else {
                    e.direct().answers.abandoned(1 + random.nextInt(3), new FencelineException("lane ended"));
                }
            }
            default -> {
                synchronized (e) { // the actor takes posted operations back
                    e.direct().took(1 + random.nextInt(2));
                }
            }
        }
    }

    private static void assertAgree(WorkerCounts worker, List<EndpointChannel> endpoints, long seed) {
        Totals sum = new Totals();
        for (EndpointChannel e : endpoints) {
            sum.add(e);
        }
        Totals running = Totals.of(worker);
        for (Counter c : COUNTERS) {
            assertEquals(sum.get(c), running.get(c), c + ", seed " + seed);
        }
        assertEquals(List.of(sum.operations(), sum.completed(), sum.failed(), sum.flushes(), sum.fastPath()),
                List.of(running.operations(), running.completed(), running.failed(), running.flushes(),
                        running.fastPath()), "operations, completed, failed, flushes, fast path; seed " + seed);
    }
}
