package dev.fenceline.internal;

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

/** The pure admission decision and lane normalization: the per-request cost of the fence engine. */
@State(Scope.Thread)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@Warmup(iterations = 3, time = 1)
@Measurement(iterations = 5, time = 1)
@Fork(1)
public class FenceDecisionBenchmark {
    private final FenceState enforced = new FenceState(5, 0b01, false, FenceState.NONE, 0, 0, 0);
    private final FenceState needsFence = new FenceState(4, 0b01, false, FenceState.NONE, 0, 0, 0);
    private long epoch = 5;

    /** @return the common case: the request's epoch is already enforced */
    @Benchmark
    public FenceDecision admitEnforced() {
        return enforced.decide(FenceMode.ENDPOINT, epoch, 0b10, 0b11, false);
    }

    /** @return a fence on the same lane: the weak path */
    @Benchmark
    public FenceDecision weakPath() {
        return needsFence.decide(FenceMode.ENDPOINT, epoch, 0b01, 0b11, false);
    }

    /** @return a fence across lanes: the strong path's decision (not its flush) */
    @Benchmark
    public FenceDecision strongPathDecision() {
        return needsFence.decide(FenceMode.ENDPOINT, epoch, 0b10, 0b11, false);
    }

    /** @return lane normalization before a strong fence */
    @Benchmark
    public long normalize() {
        return FenceState.normalize(0b0101, 0b0111 ^ (epoch & 1), (epoch & 2) != 0);
    }
}
