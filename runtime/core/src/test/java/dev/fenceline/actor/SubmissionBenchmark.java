package dev.fenceline.actor;

import dev.fenceline.RemoteKey;
import dev.fenceline.WorkerAddress;
import java.nio.ByteBuffer;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.Warmup;

/**
 * The submission path between a calling thread and its endpoint actor, on one thread: building a
 * request (with its future), queueing it on the endpoint's channel (which voids the fast-path grant
 * and schedules at most one drain message), and the actor's side taking it off again. What the
 * perf tool's per-operation rows pay before any transport work.
 * Beside the actor's tests, because the actor's side of the channel is package-private.
 */
@State(Scope.Thread)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@Warmup(iterations = 3, time = 1)
@Measurement(iterations = 5, time = 1)
@Fork(1)
public class SubmissionBenchmark {
    private static final int BATCH = 256;
    private final UUID peerId = UUID.randomUUID();
    private final EndpointChannel channel = new EndpointChannel("bench", new WorkerAddress(peerId, "peer", Map.of()));
    private final RemoteKey key = new RemoteKey(peerId, 1, 0x1000, 1 << 20, java.util.Map.of());
    private final ByteBuffer data = ByteBuffer.allocateDirect(8);

    /** @return a put request as the caller builds it, with its future */
    @Benchmark
    public Request buildRequest() {
        return Request.rma(Request.Kind.PUT, 0, data.slice(), 0x1000, key);
    }

    /** @return one request submitted and taken by the actor's side at once (no queue build-up) */
    @Benchmark
    public Request submitAndTake() {
        channel.submit(Request.rma(Request.Kind.PUT, 0, data.slice(), 0x1000, key));
        channel.submissions().drainStarted();
        return channel.submissions().poll();
    }

    /**
     * A burst as a streaming caller makes it: 256 submissions, then the actor's turn drains them.
     * Divide by 256 for the cost per request.
     *
     * @return requests drained
     */
    @Benchmark
    public int burstOf256() {
        for (int i = 0; i < BATCH; i++) {
            channel.submit(Request.rma(Request.Kind.PUT, 0, data.slice(), 0x1000, key));
        }
        channel.submissions().drainStarted();
        int n = 0;
        while (channel.submissions().poll() != null) {
            n++;
        }
        return n;
    }
}
