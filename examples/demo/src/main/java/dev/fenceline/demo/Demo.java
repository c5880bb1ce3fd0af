package dev.fenceline.demo;

import dev.fenceline.Endpoint;
import dev.fenceline.Fenceline;
import dev.fenceline.MemoryRegion;
import dev.fenceline.RemoteKey;
import dev.fenceline.Worker;
import dev.fenceline.testkit.ModelCheckedWorkload;
import java.util.concurrent.TimeUnit;

/** Sets up two workers and runs the model-checked workload between them. */
final class Demo {
    private static final int COUNTERS = 64;
    private static final int AM_ID = 1;
    private static final long TIMEOUT_S = 60;

    private Demo() {
    }

    static DemoReport run(Fenceline fenceline, int ops, long seed, int regionBytes, int window, boolean fencing)
            throws Exception {
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
        ModelCheckedWorkload.Result r = workload.run(ops);
        return new DemoReport(fenceline.transports(), fenceline.fenceMode(), ep.lanes(), r, alpha.statistics());
    }
}
