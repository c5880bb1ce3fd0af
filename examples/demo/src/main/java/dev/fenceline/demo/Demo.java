package dev.fenceline.demo;

import dev.fenceline.Endpoint;
import dev.fenceline.Fenceline;
import dev.fenceline.MemoryRegion;
import dev.fenceline.RemoteKey;
import dev.fenceline.Worker;
import dev.fenceline.testkit.ModelCheckedWorkload;
import dev.fenceline.testkit.SimNetwork;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;

/** Sets up two workers and runs the model-checked workload between them. */
final class Demo {
    private static final int COUNTERS = 64;
    private static final int AM_ID = 1;
    private static final long TIMEOUT_S = 60;

    private Demo() {
    }

    static DemoReport run(Fenceline fenceline, int ops, long seed, int regionBytes, int window, boolean fencing)
            throws Exception {
        return run(fenceline, ops, seed, regionBytes, window, fencing, false);
    }

    /**
     * @param faults fail a lane a third of the way in, recover it at half way, and replace another
     *     at two thirds (sim transport only)
     */
    static DemoReport run(Fenceline fenceline, int ops, long seed, int regionBytes, int window, boolean fencing,
            boolean faults) throws Exception {
        Worker alpha = fenceline.newWorker("alpha").toCompletableFuture().get(TIMEOUT_S, TimeUnit.SECONDS);
        Worker beta = fenceline.newWorker("beta").toCompletableFuture().get(TIMEOUT_S, TimeUnit.SECONDS);
        MemoryRegion data = beta.allocate(regionBytes);
        MemoryRegion counters = beta.allocate(COUNTERS * 8L);
        // Keys travel as bytes, as they would between processes.
        RemoteKey dataKey = alpha.unpackRemoteKey(data.remoteKey().toBytes());
        RemoteKey counterKey = alpha.unpackRemoteKey(counters.remoteKey().toBytes());
        Endpoint ep = alpha.connect(beta.address()).toCompletableFuture().get(TIMEOUT_S, TimeUnit.SECONDS);
        ModelCheckedWorkload workload = new ModelCheckedWorkload(ep, new ModelCheckedWorkload.Options(data, dataKey, 0,
                regionBytes, counters, counterKey, 0, COUNTERS, AM_ID, seed, window, fencing));
        beta.setActiveMessageHandler(AM_ID, workload.activeMessageHandler());
        List<String> injected = new CopyOnWriteArrayList<>();
        Thread injector = faults ? startInjector(fenceline, alpha, ep, ops, injected) : null;
        ModelCheckedWorkload.Result r;
        try {
            r = workload.run(ops);
        } finally {
            if (injector != null) {
                injector.interrupt();
                injector.join(TimeUnit.SECONDS.toMillis(TIMEOUT_S));
            }
        }
        return new DemoReport(fenceline.transports(), fenceline.fenceMode(), ep.lanes(), r, alpha.statistics(),
                List.copyOf(injected));
    }

    /** Watches progress and changes lanes at fixed fractions of the workload, while it runs. */
    private static Thread startInjector(Fenceline fenceline, Worker alpha, Endpoint ep, int ops, List<String> log) {
        SimNetwork net = SimNetwork.of(fenceline);
        int bulk = ep.lanes().size() - 1;
        Thread t = new Thread(() -> {
            int step = 0;
            while (step < 3 && !Thread.currentThread().isInterrupted()) {
                long done = alpha.statistics().operations();
                if (step == 0 && done >= ops / 3) {
                    net.failLane(ep, bulk);
                    log.add("failed lane " + bulk + " after " + done + " operations");
                    step++;
                } else if (step == 1 && done >= ops / 2 && !ep.lanes().get(bulk).live()) {
                    net.recoverLane(ep, bulk);
                    log.add("recovered lane " + bulk + " after " + done + " operations");
                    step++;
                } else if (step == 2 && done >= 2 * ops / 3 && ep.lanes().get(bulk).live()) {
                    net.replaceLane(ep, 0);
                    log.add("replaced lane 0 after " + done + " operations");
                    step++;
                }
                LockSupport.parkNanos(200_000);
            }
        }, "demo-fault-injector");
        t.setDaemon(true);
        t.start();
        return t;
    }
}
