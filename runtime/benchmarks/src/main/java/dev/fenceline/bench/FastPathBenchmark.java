package dev.fenceline.bench;

import com.typesafe.config.ConfigFactory;
import dev.fenceline.AtomicOp;
import dev.fenceline.Endpoint;
import dev.fenceline.Fenceline;
import dev.fenceline.MemoryRegion;
import dev.fenceline.RemoteKey;
import dev.fenceline.Worker;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;
import org.openjdk.jmh.annotations.Warmup;

/**
 * The calling thread's cost of an operation done on return (the fast path by grant) over a
 * shared-memory lane, through the public API, between two workers of one process: an 8-byte implicit
 * put, a put with its stage, a posted ADD and a fetch-add; beside them the store alone into a direct
 * buffer (what UCX's posix put is), so the runtime's own share reads as the difference. Over the shm
 * transport and over the ucx transport's UCT posix lane, whose stores go through UCT's mapping of the
 * peer's segment; the ucx rows need UCX installed (the set-up says why it is not offered otherwise).
 */
@State(Scope.Thread)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@Warmup(iterations = 3, time = 1)
@Measurement(iterations = 5, time = 1)
@Fork(value = 1, jvmArgsAppend = {"--add-exports", "java.base/jdk.internal.misc=ALL-UNNAMED", "-Xms1g", "-Xmx1g"})
public class FastPathBenchmark {
    private static final VarHandle LONG = MethodHandles.byteBufferViewVarHandle(long[].class, ByteOrder.nativeOrder());

    /** shm, or ucx over UCT posix. */
    @Param({"shm", "ucx"})
    public String transport;

    private Fenceline fenceline;
    private Worker a;
    private Endpoint ep;
    private MemoryRegion region;
    private RemoteKey key;
    private long address;
    private final ByteBuffer src = ByteBuffer.allocateDirect(8).order(ByteOrder.nativeOrder());
    private final ByteBuffer floor = ByteBuffer.allocateDirect(64).order(ByteOrder.nativeOrder());
    private long value;
    /** Operations this iteration asked for, against which the fast path's own count is checked. */
    private long calls;
    private long directBefore;
    private long failedBefore;

    /**
     * Starts two workers on the transport and waits until the endpoint grants the fast path.
     *
     * @throws Exception if they do not start, or no grant comes
     */
    @Setup(Level.Trial)
    public void start() throws Exception {
        String config = switch (transport) {
            case "shm" -> "fenceline.transports = [shm]";
            case "ucx" -> "fenceline.transports = [ucx]\nfenceline.transport.ucx.tls = [posix]";
            default -> throw new IllegalArgumentException("transport: shm or ucx, not " + transport);
        };
        fenceline = Fenceline.create(ConfigFactory.parseString(config));
        a = fenceline.newWorker("a").toCompletableFuture().get(10, TimeUnit.SECONDS);
        Worker b = fenceline.newWorker("b").toCompletableFuture().get(10, TimeUnit.SECONDS);
        region = b.allocate(4096);
        key = a.unpackRemoteKey(region.remoteKey().toBytes());
        address = region.address();
        ep = a.connect(b.address()).toCompletableFuture().get(10, TimeUnit.SECONDS);
        for (int attempt = 0; ; attempt++) {
            ep.flush().toCompletableFuture().get(10, TimeUnit.SECONDS);
            long before = a.statistics().direct();
            ep.put(src, address, key).toCompletableFuture().get(10, TimeUnit.SECONDS);
            if (a.statistics().direct() > before) {
                break;
            }
            if (attempt == 1000) {
                throw new IllegalStateException("the endpoint never granted the fast path: " + a.statistics());
            }
        }
    }

    /** Counts from here. */
    @Setup(Level.Iteration)
    public void count() {
        calls = 0;
        directBefore = a.statistics().direct();
        failedBefore = a.statistics().failed();
    }

    /**
     * Fails the run if an operation was not done on the calling thread (the grant lapsed and it went
     * through the actor) or was refused: then this would not measure the fast path.
     */
    @TearDown(Level.Iteration)
    public void check() {
        long direct = a.statistics().direct() - directBefore;
        long failed = a.statistics().failed() - failedBefore;
        if (direct != calls || failed != 0) {
            throw new IllegalStateException(calls + " operations, " + direct + " on the fast path, " + failed
                    + " failed: " + a.statistics());
        }
    }

    /** Closes the runtime. */
    @TearDown(Level.Trial)
    public void stop() {
        fenceline.close();
    }

    /** The floor: one 8-byte store into a direct buffer, released, as the put's own store is. */
    @Benchmark
    public void storeOnly() {
        LONG.set(floor, 8, ++value);
        VarHandle.releaseFence();
    }

    /** An implicit 8-byte put. */
    @Benchmark
    public void putImplicit() {
        calls++;
        src.putLong(0, ++value);
        ep.putImplicit(src, address + 8, key);
    }

    /** @return the stage of an 8-byte put (done on return) */
    @Benchmark
    public CompletionStage<Void> putWithStage() {
        calls++;
        src.putLong(0, ++value);
        return ep.put(src, address + 8, key);
    }

    /** A posted 64-bit ADD. */
    @Benchmark
    public void addImplicit() {
        calls++;
        ep.atomicPostImplicit64(AtomicOp.ADD, address + 16, key, 1);
    }

    /** @return the stage of a 64-bit fetch-add (done on return) */
    @Benchmark
    public CompletionStage<Long> fetchAdd() {
        calls++;
        return ep.atomicFetch64(AtomicOp.ADD, address + 16, key, 1);
    }
}
