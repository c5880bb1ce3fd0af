package dev.fenceline.perf;

import com.typesafe.config.Config;
import com.typesafe.config.ConfigFactory;
import dev.fenceline.Endpoint;
import dev.fenceline.Fenceline;
import dev.fenceline.MemoryRegion;
import dev.fenceline.Worker;
import java.lang.management.ManagementFactory;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;

/**
 * How one worker holds many endpoints, through the public API only: N endpoints from one worker to
 * one peer worker in this JVM, connected with a bounded number in flight; the heap they retain; a
 * put and a flush over every one (each writes its own word of the peer's region, checked after); the
 * process's CPU while they sit idle; and closing them all.
 */
final class EndpointScale {
    /** Connects in flight at once: enough to measure the worker, not the caller's patience. */
    private static final int IN_FLIGHT = 256;
    /**
     * The idle period.
     *
     * @param settleSeconds idle time before the CPU is measured: JIT compilation and collection of
     *     the burst end (the compilers keep working for a minute after ten thousand connects)
     * @param seconds how long the CPU is measured
     */
    record Idle(double settleSeconds, double seconds) {
    }

    /**
     * One measurement.
     *
     * @param transport the transport
     * @param endpoints endpoints asked for
     * @param connected endpoints that connected
     * @param connectSeconds the time to connect them
     * @param connectFailure the first connect's failure, or null
     * @param heapPerEndpoint bytes of heap retained per connected endpoint (after a full collection)
     * @param heapPerUsedEndpoint the same once each has carried a put and a flush and is idle again
     * @param heapPerClosedEndpoint what is left of each once all are closed and their actors stopped
     * @param putFlushSeconds the time of a put and a flush over every endpoint
     * @param verified words of the peer's region that hold what their endpoint put
     * @param idleCoreFraction the process's CPU over the idle period, in cores (1.0 = one core busy)
     * @param idleSeconds how long they sat idle while measured
     * @param idleSettleSeconds how long they sat idle before
     * @param closeSeconds the time to close them all
     */
    record Result(String transport, int endpoints, int connected, double connectSeconds, String connectFailure,
            double heapPerEndpoint, double heapPerUsedEndpoint, double heapPerClosedEndpoint, double putFlushSeconds,
            int verified, double idleCoreFraction, double idleSeconds, double idleSettleSeconds, double closeSeconds) {
        double connectsPerSecond() {
            return connected / connectSeconds;
        }

        String text() {
            return String.format(Locale.ROOT, "endpoints %-4s %7d: connected %d in %.2f s (%,.0f/s), %,.0f B heap"
                    + " each (%,.0f B once used), put+flush over all %.2f s, %d verified, idle %.1f%% of a core"
                    + " over %.0f s (after %.0f s), closed in %.2f s (%,.0f B heap each left after)%s", transport,
                    endpoints, connected, connectSeconds, connectsPerSecond(), heapPerEndpoint, heapPerUsedEndpoint,
                    putFlushSeconds, verified, idleCoreFraction * 100, idleSeconds, idleSettleSeconds, closeSeconds,
                    heapPerClosedEndpoint, connectFailure == null ? "" : "; first connect failure: " + connectFailure);
        }

        String json() {
            return String.format(Locale.ROOT, "{\"test\": \"endpoints\", \"transport\": \"%s\", \"endpoints\": %d,"
                    + " \"connected\": %d, \"connect_s\": %.3f, \"connects_per_s\": %.1f,"
                    + " \"heap_per_endpoint\": %.0f, \"heap_per_used_endpoint\": %.0f, \"put_flush_s\": %.3f,"
                    + " \"verified\": %d, \"idle_cores\": %.4f, \"idle_s\": %.1f, \"idle_settle_s\": %.1f,"
                    + " \"close_s\": %.3f, \"heap_per_closed_endpoint\": %.0f, \"connect_failure\": %s}", transport,
                    endpoints, connected, connectSeconds, connectsPerSecond(), heapPerEndpoint, heapPerUsedEndpoint,
                    putFlushSeconds, verified, idleCoreFraction, idleSeconds, idleSettleSeconds, closeSeconds,
                    heapPerClosedEndpoint,
                    connectFailure == null ? "null" : "\"" + connectFailure.replace("\\", "\\\\")
                            .replace("\"", "\\\"") + "\"");
        }
    }

    private EndpointScale() {
    }

    /**
     * Measures each count in turn and prints the results, as text lines or one JSON array.
     *
     * @param config the configuration
     * @param transport the transport's name
     * @param counts the endpoint counts
     * @param idle the idle period
     * @param json whether to print JSON
     * @param out where to print
     * @throws Exception if the workers cannot start
     */
    static void run(Config config, String transport, List<Integer> counts, Idle idle, boolean json,
            java.io.PrintStream out) throws Exception {
        List<Result> results = new ArrayList<>();
        for (int n : counts) {
            Result r = measure(config, transport, n, idle);
            results.add(r);
            if (!json) {
                out.println(r.text());
            }
        }
        if (json) {
            out.println("[");
            for (int i = 0; i < results.size(); i++) {
                out.println("  " + results.get(i).json() + (i + 1 < results.size() ? "," : ""));
            }
            out.println("]");
        }
    }

    /**
     * @param config the configuration (its transports)
     * @param transport the transport's name, for the report
     * @param n how many endpoints
     * @param idle how long they sit idle before and while the process's CPU is measured
     * @return the measurement
     * @throws Exception if the workers cannot start
     */
    static Result measure(Config config, String transport, int n, Idle idle) throws Exception {
        try (Fenceline f = Fenceline.create(config)) {
            Worker alpha = f.newWorker("alpha").toCompletableFuture().get(30, TimeUnit.SECONDS);
            Worker beta = f.newWorker("beta").toCompletableFuture().get(30, TimeUnit.SECONDS);
            MemoryRegion region = beta.allocate(8L * n);
            region.buffer().order(ByteOrder.nativeOrder());
            long heapBefore = usedHeapAfterGc();

            List<Endpoint> endpoints = java.util.Collections.synchronizedList(new ArrayList<>(n));
            Semaphore permits = new Semaphore(IN_FLIGHT);
            AtomicReference<String> failure = new AtomicReference<>();
            AtomicInteger failed = new AtomicInteger();
            long t0 = System.nanoTime();
            List<CompletableFuture<Void>> connects = new ArrayList<>(n);
            for (int i = 0; i < n; i++) {
                permits.acquire();
                connects.add(alpha.connect(beta.address()).toCompletableFuture().handle((e, err) -> {
                    permits.release();
                    if (err != null) {
                        failed.incrementAndGet();
                        failure.compareAndSet(null, String.valueOf(err.getCause() != null ? err.getCause() : err));
                    } else {
                        endpoints.add(e);
                    }
                    return null;
                }));
            }
            CompletableFuture.allOf(connects.toArray(CompletableFuture[]::new)).get(10, TimeUnit.MINUTES);
            double connectSeconds = (System.nanoTime() - t0) / 1e9;
            connects.clear(); // the benchmark's own futures are not the endpoints' heap
            long heapAfter = usedHeapAfterGc();
            int connected = endpoints.size();

            long t1 = System.nanoTime();
            List<CompletableFuture<Void>> puts = new ArrayList<>(connected);
            for (int i = 0; i < connected; i++) {
                Endpoint e = endpoints.get(i);
                ByteBuffer word = ByteBuffer.allocateDirect(8).order(ByteOrder.nativeOrder()).putLong(0, i + 1L);
                puts.add(e.put(word, region.address() + 8L * i, region.remoteKey())
                        .thenCompose(v -> e.flush()).toCompletableFuture());
                if (puts.size() % IN_FLIGHT == 0) {
                    CompletableFuture.allOf(puts.subList(puts.size() - IN_FLIGHT, puts.size())
                            .toArray(CompletableFuture[]::new)).get(5, TimeUnit.MINUTES);
                }
            }
            CompletableFuture.allOf(puts.toArray(CompletableFuture[]::new)).get(5, TimeUnit.MINUTES);
            double putFlushSeconds = (System.nanoTime() - t1) / 1e9;
            puts.clear();
            long heapAfterUse = usedHeapAfterGc();
            int verified = 0;
            ByteBuffer memory = region.buffer().order(ByteOrder.nativeOrder());
            for (int i = 0; i < connected; i++) {
                if (memory.getLong(8 * i) == i + 1L) {
                    verified++;
                }
            }

            double idleCores = idleCpu(idle);

            long t2 = System.nanoTime();
            List<CompletableFuture<Void>> closes = new ArrayList<>(connected);
            for (Endpoint e : endpoints) {
                closes.add(e.close().toCompletableFuture());
            }
            CompletableFuture.allOf(closes.toArray(CompletableFuture[]::new)).get(5, TimeUnit.MINUTES);
            double closeSeconds = (System.nanoTime() - t2) / 1e9;
            closes.clear();
            endpoints.clear(); // the application lets go of its endpoints too
            // A closed endpoint's actor lingers for connect-timeout (to close what a connect still
            // hands it), then stops.
            Thread.sleep(config.withFallback(ConfigFactory.defaultReference())
                    .getDuration("fenceline.endpoint.connect-timeout").toMillis() + 500);
            long heapAfterClose = usedHeapAfterGc();
            return new Result(transport, n, connected, connectSeconds, failure.get() == null ? null
                    : failed.get() + " failed, the first: " + failure.get(),
                    connected == 0 ? 0 : (double) (heapAfter - heapBefore) / connected,
                    connected == 0 ? 0 : (double) (heapAfterUse - heapBefore) / connected,
                    connected == 0 ? 0 : (double) (heapAfterClose - heapBefore) / connected, putFlushSeconds, verified,
                    idleCores, idle.seconds(), idle.settleSeconds(), closeSeconds);
        }
    }

    /** @return the heap in use after full collections, settled */
    private static long usedHeapAfterGc() throws InterruptedException {
        java.lang.management.MemoryMXBean mx = ManagementFactory.getMemoryMXBean();
        long used = Long.MAX_VALUE;
        for (int i = 0; i < 4; i++) {
            System.gc();
            Thread.sleep(50); // reference processing and cleaners run between collections
            used = Math.min(used, mx.getHeapMemoryUsage().getUsed());
        }
        return used;
    }

    /**
     * @return the process's CPU over the idle period's seconds of doing nothing, in cores, after its
     *     settling period, in which the compiler and the collector finish with the burst before it
     */
    private static double idleCpu(Idle idle) throws InterruptedException {
        double seconds = idle.seconds();
        Thread.sleep((long) (idle.settleSeconds() * 1000)); // the benchmark's own thread waits: nothing else to do
        com.sun.management.OperatingSystemMXBean os = (com.sun.management.OperatingSystemMXBean)
                ManagementFactory.getOperatingSystemMXBean();
        long cpu0 = os.getProcessCpuTime();
        long t0 = System.nanoTime();
        Thread.sleep((long) (seconds * 1000)); // the measurement is of idleness: this thread sleeps on purpose
        return (os.getProcessCpuTime() - cpu0) / (double) (System.nanoTime() - t0);
    }
}
