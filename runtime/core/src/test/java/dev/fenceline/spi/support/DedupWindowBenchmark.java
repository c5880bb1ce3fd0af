package dev.fenceline.spi.support;

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
 * The target's exactly-once window per operation: the steady stream (each operation new, the
 * origin's mark 64 behind), and marks that jump past everything a window holds after it grew to its
 * largest spread once, and a far sequence number alternating with a far mark (what a peer can make
 * the target do with each small frame).
 */
@State(Scope.Thread)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@Warmup(iterations = 3, time = 1)
@Measurement(iterations = 5, time = 1)
@Fork(1)
public class DedupWindowBenchmark {
    private static final int SPREAD = 1 << 20;
    private final DedupWindow steady = new DedupWindow(SPREAD);
    private final DedupWindow jumping = new DedupWindow(SPREAD);
    private final DedupWindow alternatingWindow = new DedupWindow(SPREAD);
    private long alternating;
    private long seq;
    private long base;

    /** @return one operation looked up and recorded, its mark 64 behind */
    @Benchmark
    public long newOperation() {
        long s = seq++;
        DedupWindow.Seen seen = steady.lookup(s, Math.max(0, s - 64));
        steady.record(s, s);
        return seen.ordinal();
    }

    /** Grows {@link #jumping} to its largest spread once, as a peer's one frame can. */
    @org.openjdk.jmh.annotations.Setup
    public void grow() {
        jumping.lookup(SPREAD - 1, 0);
        jumping.record(SPREAD - 1, 1);
        base = SPREAD;
    }

    /**
     * @return an operation at the edge of the spread, then one at a mark past it: a peer alternating
     *     the two in its frames (each pair moves both by the spread)
     */
    @Benchmark
    public int farSequenceThenFarMark() {
        long far = alternating + SPREAD - 1;
        alternatingWindow.lookup(far, alternating);
        alternatingWindow.record(far, 1);
        alternating = far + 1;
        alternatingWindow.lookup(alternating, alternating);
        alternatingWindow.record(alternating, 1);
        return alternatingWindow.capacity();
    }

    /** @return an operation at a mark that moved past everything the window holds */
    @Benchmark
    public int markJumpsPastEverythingHeld() {
        base += SPREAD;
        jumping.lookup(base, base);
        jumping.record(base, 1);
        return jumping.capacity();
    }
}
