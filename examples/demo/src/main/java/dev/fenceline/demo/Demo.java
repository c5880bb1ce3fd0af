package dev.fenceline.demo;

import dev.fenceline.Endpoint;
import dev.fenceline.Fenceline;
import dev.fenceline.MemoryRegion;
import dev.fenceline.RemoteKey;
import dev.fenceline.Worker;
import dev.fenceline.WorkerAddress;
import dev.fenceline.testkit.ModelCheckedWorkload;
import dev.fenceline.testkit.RemoteRegion;
import java.io.BufferedReader;
import java.time.Duration;
import java.util.ArrayList;
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
                List.copyOf(injected), "in one JVM");
    }

    /**
     * The workload against a target worker in another process: its memory is read back through the
     * endpoint for the checks ({@link RemoteRegion}), and at the end the target process reports the
     * digest of its own memory, which must equal the digest of what was read.
     */
    static DemoReport runAgainst(Fenceline fenceline, WorkerAddress target, byte[] dataKeyBytes, byte[] counterKeyBytes,
            int ops, long seed, int window, long targetPid, BufferedReader targetOut) throws Exception {
        Worker alpha = fenceline.newWorker("alpha").toCompletableFuture().get(TIMEOUT_S, TimeUnit.SECONDS);
        RemoteKey dataKey = alpha.unpackRemoteKey(dataKeyBytes);
        RemoteKey counterKey = alpha.unpackRemoteKey(counterKeyBytes);
        Endpoint ep = alpha.connect(target).toCompletableFuture().get(TIMEOUT_S, TimeUnit.SECONDS);
        Duration t = Duration.ofSeconds(TIMEOUT_S);
        RemoteRegion data = new RemoteRegion(ep, dataKey, t);
        RemoteRegion counters = new RemoteRegion(ep, counterKey, t);
        ModelCheckedWorkload workload = new ModelCheckedWorkload(ep, new ModelCheckedWorkload.Options(data, dataKey, 0,
                (int) dataKey.length(), counters, counterKey, 0, (int) (counterKey.length() / 8), -1, seed, window,
                true));
        ModelCheckedWorkload.Result r = workload.run(ops);
        String seen = DemoTarget.digest(data.buffer(), counters.buffer());
        ep.sendActiveMessage(DemoTarget.DIGEST, null, null).toCompletableFuture().get(TIMEOUT_S, TimeUnit.SECONDS);
        String line = targetOut.readLine();
        List<String> errors = new ArrayList<>(r.errors());
        if (line == null || !line.equals("DIGEST " + seen)) {
            errors.add("the target process holds other bytes than were read back: it says " + line + ", read "
                    + seen);
        }
        ModelCheckedWorkload.Result checked = new ModelCheckedWorkload.Result(r.puts(), r.gets(), r.atomics(),
                r.messages(), r.fences(), r.flushes(), r.verifiedBytes(), r.checks() + 1, List.copyOf(errors),
                r.elapsed());
        return new DemoReport(fenceline.transports(), fenceline.fenceMode(), ep.lanes(), checked, alpha.statistics(),
                List.of(), "in two processes (target pid " + targetPid + "; its own memory digest checked)");
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
