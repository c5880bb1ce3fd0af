package dev.fenceline.internal;

import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.UUID;
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
import org.openjdk.jmh.infra.Blackhole;

/**
 * What a message's delivery costs around a user's active-message handler on the receiving thread:
 * the transport's two views of it (sliced per message, read-only as shm's and UCT's or writable),
 * the id's lookup, the slow-handler watch (with the default bound and without one) and the
 * read-only views the handler gets. Every transport's target pays it once per message, on the
 * ping-pong's path.
 */
@State(Scope.Thread)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@Warmup(iterations = 3, time = 1)
@Measurement(iterations = 5, time = 1)
@Fork(value = 1, jvmArgsAppend = "-Dlogback.configurationFile=nonexistent.xml")
public class HandlerDispatchBenchmark {
    /** The handler-time bound in milliseconds: 100 is the default, 0 turns the watch off. */
    @Param({"100", "0"})
    public long boundMillis;

    /**
     * Whether the transport's views are read-only already (shm, UCT: they go to the handler as they
     * are) or writable (each then gets a read-only view of its own).
     */
    @Param({"true", "false"})
    public boolean readOnlyViews;

    private RegistrationTable table;
    /** What the transport slices each message's views from (its ring, or receive buffer). */
    private ByteBuffer memory = ByteBuffer.allocateDirect(64);
    private Blackhole sink;

    @Setup(Level.Trial)
    public void setUp(Blackhole bh) {
        sink = bh;
        if (readOnlyViews) {
            memory = memory.asReadOnlyBuffer();
        }
        table = new RegistrationTable(UUID.randomUUID(), "bench");
        table.handlerTimeBound(Duration.ofMillis(boundMillis));
        table.setHandler(7, (h, p) -> {
            sink.consume(h);
            sink.consume(p.getLong(0));
            sink.consume(p);
        });
    }

    @TearDown(Level.Trial)
    public void tearDown() {
        table.handlerTimeBound(Duration.ZERO);
    }

    /**
     * One message, its two views sliced as a transport slices them, to a handler that reads its
     * payload (and keeps both from escape analysis, as a handler the JIT cannot see through does).
     */
    @Benchmark
    public void dispatch() {
        table.activeMessage(7, memory.slice(0, 8), memory.slice(8, 8));
    }
}
