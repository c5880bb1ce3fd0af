package dev.fenceline.spi.support;

import java.time.Duration;

/**
 * The reconnect arithmetic of a failed connection (a tcp rail, a UCT lane), pure so that it is tested without an actor or a clock:
 * exponential backoff from {@code min} to {@code max}, a give-up clock, and the rule that a
 * connection which died soon after it came up (a flapping path, a peer that kills it at once) keeps
 * the backoff and the give-up clock of the failure before it.
 *
 * @param min the first delay
 * @param max the longest delay
 * @param giveUpAfter how long after the failure that started the series reconnecting stops
 * @param stableAfter how long a connection must live for its loss to start a new series
 */
public record ReconnectPolicy(Duration min, Duration max, Duration giveUpAfter, Duration stableAfter) {

    /**
     * Where a series of reconnect attempts stands.
     *
     * @param failedAt when the failure that started the series happened (nanoseconds)
     * @param delayNanos the delay before the next attempt, before jitter
     */
    public record Backoff(long failedAt, long delayNanos) {
    }

    /**
     * @param previous the series the last loss started, or null if there was none
     * @param now when the connection was lost
     * @param connectedAt when it had come up
     * @return the series to reconnect in
     */
    public Backoff lost(Backoff previous, long now, long connectedAt) {
        boolean flapping = previous != null && now - connectedAt < stableAfter.toNanos();
        return flapping ? previous : new Backoff(now, min.toNanos());
    }

    /**
     * @param b the series
     * @param now when the attempt failed
     * @return the series with the next, longer delay, or null when reconnecting stops
     */
    public Backoff failed(Backoff b, long now) {
        if (now - b.failedAt() > giveUpAfter.toNanos()) {
            return null;
        }
        return new Backoff(b.failedAt(), Math.min(saturatedDouble(b.delayNanos()), max.toNanos()));
    }

    /**
     * Rails that lost the same path do not reconnect in lockstep: the delay is drawn from its upper
     * half.
     *
     * @param b the series
     * @param random a uniformly random long
     * @return the delay in nanoseconds, in {@code [delay / 2, delay]}
     */
    public static long jittered(Backoff b, long random) {
        long half = b.delayNanos() / 2;
        return half + Math.floorMod(random, b.delayNanos() - half + 1);
    }

    private static long saturatedDouble(long v) {
        return v > Long.MAX_VALUE / 2 ? Long.MAX_VALUE : v * 2;
    }
}
