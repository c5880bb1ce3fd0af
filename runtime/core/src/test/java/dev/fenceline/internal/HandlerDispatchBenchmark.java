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
 * What the runtime adds around a user's active-message handler on the receiving thread: the id's
 * lookup, the slow-handler watch (with the default bound and without one) and the read-only views
 * the handler gets. Every transport's target pays it once per message, on the ping-pong's path.
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

    private RegistrationTable table;
    private final ByteBuffer header = ByteBuffer.allocateDirect(8);
    private final ByteBuffer payload = ByteBuffer.allocateDirect(8);
    private Blackhole sink;

    @Setup(Level.Trial)
    public void setUp(Blackhole bh) {
        sink = bh;
        table = new RegistrationTable(UUID.randomUUID(), "bench");
        table.handlerTimeBound(Duration.ofMillis(boundMillis));
        table.setHandler(7, (h, p) -> sink.consume(p.getLong(0)));
    }

    @TearDown(Level.Trial)
    public void tearDown() {
        table.handlerTimeBound(Duration.ZERO);
    }

    /** One message to a handler that reads its payload. */
    @Benchmark
    public void dispatch() {
        table.activeMessage(7, header, payload);
    }
}
