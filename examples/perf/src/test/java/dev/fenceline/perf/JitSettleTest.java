package dev.fenceline.perf;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * The wait for quiet compilers, on virtual time: none when turned off, the quiet period after the
 * last compilation of any JVM it watches, never past its bound.
 */
class JitSettleTest {
    /** Virtual time: a sleep moves it on. */
    private static final class VirtualClock implements JitSettle.Clock {
        long nanos;

        @Override
        public long nanoTime() {
            return nanos;
        }

        @Override
        public void sleepMillis(long millis) {
            nanos += TimeUnit.MILLISECONDS.toNanos(millis);
        }

        long millis() {
            return TimeUnit.NANOSECONDS.toMillis(nanos);
        }
    }

    /** A JVM that compiles (its total moves on each reading) up to {@code untilMillis} of the clock. */
    private static JitSettle.CompileTime compilingUntil(VirtualClock clock, long untilMillis) {
        long[] total = {0};
        return () -> clock.millis() <= untilMillis ? ++total[0] : total[0];
    }

    @Test
    void waitsTheQuietPeriodAfterTheLastCompilation() throws Exception {
        VirtualClock clock = new VirtualClock();
        assertEquals(0, JitSettle.await(0, List.of(compilingUntil(clock, 1_000)), clock), "0 turns the wait off");
        assertEquals(JitSettle.QUIET_MS, JitSettle.await(3_000, List.of(compilingUntil(clock, 0)), clock),
                "quiet from the start");
        clock = new VirtualClock();
        assertEquals(300 + JitSettle.QUIET_MS, JitSettle.await(3_000, List.of(compilingUntil(clock, 300)), clock));
    }

    @Test
    void waitsForTheTargetProcessToo() throws Exception {
        VirtualClock clock = new VirtualClock();
        long waited = JitSettle.await(3_000, List.of(compilingUntil(clock, 0), compilingUntil(clock, 600)), clock);
        assertEquals(600 + JitSettle.QUIET_MS, waited, "this JVM was quiet; the target compiled until 600 ms");
        clock = new VirtualClock();
        waited = JitSettle.await(3_000, List.of(() -> -1, compilingUntil(clock, 400)), clock);
        assertEquals(400 + JitSettle.QUIET_MS, waited, "a JVM that does not tell is left out, not the other");
        assertEquals(0, JitSettle.await(3_000, List.of(() -> -1), new VirtualClock()), "none tells: no wait");
        assertEquals(JitSettle.QUIET_MS, JitSettle.await(3_000, List.of(() -> -1, () -> 0), new VirtualClock()),
                "one that tells, at 0 so far: the quiet period, not no wait");
    }

    @Test
    void neverWaitsPastItsBound() throws Exception {
        VirtualClock clock = new VirtualClock();
        assertEquals(1_000, JitSettle.await(1_000, List.of(compilingUntil(clock, Long.MAX_VALUE)), clock));
    }
}
