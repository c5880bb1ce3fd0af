package dev.fenceline.transport.sim;

import java.util.SplittableRandom;

/**
 * The delays of one sim lane: each operation's on the way to the target (drawn on the endpoint
 * actor's thread) and each answer's on the way back (drawn on the fabric thread), uniformly from the
 * lane's range, from two generators seeded by the lane's seed, so that a run repeats.
 */
final class SimDelays {
    /** Seeds the draws; the generators (48 B each) are made at the first draw, which idle lanes never make. */
    private final long seed;
    private SplittableRandom operations; // actor thread
    private SplittableRandom answers; // fabric thread
    private volatile long min;
    private volatile long max;

    /**
     * @param seed the lane's seed
     * @param minNanos the shortest delay
     * @param maxNanos the longest
     */
    SimDelays(long seed, long minNanos, long maxNanos) {
        this.seed = seed;
        this.min = minNanos;
        this.max = maxNanos;
    }

    /** The range from now on (fault injection; any thread). */
    void set(long minNanos, long maxNanos) {
        this.min = minNanos;
        this.max = maxNanos;
    }

    /** @param answer an answer's delay (the fabric thread draws it) or an operation's (the actor's) */
    long draw(boolean answer) {
        long lo = min;
        long hi = max;
        if (hi <= lo) {
            return lo;
        }
        SplittableRandom r = answer ? answers : operations;
        if (r == null) {
            r = new SplittableRandom(answer ? ~seed : seed);
            if (answer) {
                answers = r;
            } else {
                operations = r;
            }
        }
        return lo + r.nextLong(hi - lo + 1);
    }
}
