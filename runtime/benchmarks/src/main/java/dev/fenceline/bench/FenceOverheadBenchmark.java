package dev.fenceline.bench;

import com.typesafe.config.ConfigFactory;
import dev.fenceline.AtomicOp;
import dev.fenceline.Endpoint;
import dev.fenceline.Fenceline;
import dev.fenceline.MemoryRegion;
import dev.fenceline.RemoteKey;
import dev.fenceline.Worker;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OperationsPerInvocation;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;
import org.openjdk.jmh.annotations.Warmup;

/**
 * End-to-end fence cost on the sim transport with zero delivery delay (so the runtime, not the
 * simulated wire, is measured): batches of posted 8-byte ADDs, with no fence, with a fence after
 * every op on one lane (the weak path), and with a fence after every op on two lanes that the
 * atomics alternate between (the strong path: a remote flush per fence).
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.Throughput)
@OutputTimeUnit(TimeUnit.SECONDS)
@Warmup(iterations = 3, time = 2)
@Measurement(iterations = 5, time = 2)
@Fork(value = 1, jvmArgsAppend = {"-Xms1g", "-Xmx1g"})
public class FenceOverheadBenchmark {
    static final int BATCH = 1000;

    /** Lane shape and fencing. */
    @Param({"one-lane-nofence", "one-lane-fence", "two-lanes-nofence", "two-lanes-fence"})
    public String scenario;

    private Fenceline fenceline;
    private Endpoint ep;
    private MemoryRegion region;
    private RemoteKey key;
    private boolean fence;
    private final CompletableFuture<?>[] batch = new CompletableFuture<?>[BATCH];

    /**
     * Starts two workers over zero-delay sim lanes.
     *
     * @throws Exception if they do not start
     */
    @Setup(Level.Trial)
    public void start() throws Exception {
        String lane = "min-delay = 0us, max-delay = 0us";
        String lanes = scenario.startsWith("one-lane")
                ? "[{ types = [AM, RMA, RMA_BW, AMO], " + lane + " }]"
                : "[{ types = [AM, RMA, AMO], " + lane + " }, { types = [RMA_BW, AMO], " + lane + " }]";
        fence = scenario.endsWith("-fence");
        // sim by name: with shm and ucx on this module's class path, "auto" would pick them instead.
        fenceline = Fenceline.create(ConfigFactory.parseString(
                "fenceline.transports = [sim]\nfenceline.transport.sim.lanes = " + lanes));
        Worker a = fenceline.newWorker("a").toCompletableFuture().get(10, TimeUnit.SECONDS);
        Worker b = fenceline.newWorker("b").toCompletableFuture().get(10, TimeUnit.SECONDS);
        region = b.allocate(64);
        key = region.remoteKey();
        ep = a.connect(b.address()).toCompletableFuture().get(10, TimeUnit.SECONDS);
    }

    /** Closes the runtime. */
    @TearDown(Level.Trial)
    public void stop() {
        fenceline.close();
    }

    /**
     * One batch of posted ADDs, awaited.
     *
     * @throws Exception if an operation fails
     */
    @Benchmark
    @OperationsPerInvocation(BATCH)
    public void postedAdds() throws Exception {
        long addr = region.address();
        for (int i = 0; i < BATCH; i++) {
            batch[i] = ep.atomicPost64(AtomicOp.ADD, addr, key, 1).toCompletableFuture();
            if (fence) {
                ep.fence();
            }
        }
        CompletableFuture.allOf(batch).get(60, TimeUnit.SECONDS);
    }
}
