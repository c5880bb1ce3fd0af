package dev.fenceline.transport.ucx;

import dev.fenceline.spi.support.ReconnectPolicy;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.function.LongSupplier;

/**
 * The lanes an endpoint gave up but still wants (failed over, not closed), and their reconnect
 * attempts, on the progress agent: each is rebuilt on fresh channels after a backoff
 * ({@link ReconnectPolicy}), one attempt at a time, each bounded by the connect timeout, until an
 * attempt comes up (the endpoint hears {@code onRecovered}), the endpoint closes the lane, its peer
 * is gone, or the policy gives up. Driven by the transport actor's ticks; the attempts themselves
 * are the wiring's ({@link Dialer}).
 *
 * @param <L> the lanes
 */
final class UcxRecovery<L extends UcxRecovery.Recoverable> {
    private static final org.slf4j.Logger LOG = org.slf4j.LoggerFactory.getLogger(UcxRecovery.class);

    /** What recovery needs of a lane ({@link UcxLane}; tests use their own). */
    interface Recoverable {
        /** @return whether its endpoint gave it up and would take a reconnected one */
        boolean wantsRecovery();

        /** @return whether its peer's process is gone */
        boolean peerGone();

        /** @return the reconnect series that brought it up, or null */
        ReconnectPolicy.Backoff lastBackoff();

        /** @return when it came up (nanoseconds) */
        long upSince();

        /**
         * It came up as the reconnect of a lost lane.
         *
         * @param series the reconnect series
         * @param now when
         */
        void upAgain(ReconnectPolicy.Backoff series, long now);
    }

    /** Starts and drops reconnect attempts. */
    interface Dialer<L> {
        /**
         * Starts an attempt to rebuild a lane's connection.
         *
         * @param old the lane
         * @return the attempt's dial id, or 0 if none could start (that counts as a failed attempt)
         */
        long redial(L old);

        /** @param dial an attempt that took too long: its lanes and channels go */
        void abandon(long dial);
    }

    /** Where one lane's recovery stands. */
    private static final class State {
        ReconnectPolicy.Backoff backoff;
        long nextAt;
        /** The attempt under way, or 0. */
        long dial;
        long attemptAt;

        State(ReconnectPolicy.Backoff backoff) {
            this.backoff = backoff;
        }
    }

    private final String workerName;
    private final ReconnectPolicy policy;
    private final long attemptTimeout;
    private final LongSupplier clock;
    private final LongSupplier random;
    private final Dialer<L> dialer;
    private final Map<L, State> lanes = new LinkedHashMap<>();

    /**
     * @param workerName for the log
     * @param policy backoff and give-up
     * @param attemptTimeoutNanos how long one attempt may take
     * @param clock nanoseconds
     * @param random jitter
     * @param dialer the wiring
     */
    UcxRecovery(String workerName, ReconnectPolicy policy, long attemptTimeoutNanos, LongSupplier clock,
            LongSupplier random, Dialer<L> dialer) {
        this.workerName = workerName;
        this.policy = policy;
        this.attemptTimeout = attemptTimeoutNanos;
        this.clock = clock;
        this.random = random;
        this.dialer = dialer;
    }

    /**
     * The endpoint gave a lane up but still wants it: its first attempt comes after the policy's
     * delay (a lane that failed soon after it came up keeps the backoff of the failure before).
     *
     * @param lane the lane
     */
    void lost(L lane) {
        if (lanes.containsKey(lane) || !lane.wantsRecovery()) {
            return;
        }
        long now = clock.getAsLong();
        State s = new State(policy.lost(lane.lastBackoff(), now, lane.upSince()));
        s.nextAt = now + ReconnectPolicy.jittered(s.backoff, random.getAsLong());
        lanes.put(lane, s);
    }

    /** The actor's tick: attempts that took too long are dropped, and those due are started. */
    void tick() {
        long now = clock.getAsLong();
        for (Iterator<Map.Entry<L, State>> it = lanes.entrySet().iterator(); it.hasNext();) {
            Map.Entry<L, State> e = it.next();
            L lane = e.getKey();
            State s = e.getValue();
            if (!lane.wantsRecovery() || lane.peerGone()) {
                if (s.dial != 0) {
                    dialer.abandon(s.dial);
                }
                it.remove();
                continue;
            }
            if (s.dial != 0) {
                if (now - s.attemptAt > attemptTimeout) {
                    dialer.abandon(s.dial);
                    s.dial = 0;
                    if (!retry(lane, s, now, "the attempt timed out")) {
                        it.remove();
                    }
                }
                continue;
            }
            if (now - s.nextAt >= 0) {
                s.attemptAt = now;
                s.dial = dialer.redial(lane);
                if (s.dial == 0 && !retry(lane, s, now, "no attempt could start")) {
                    it.remove();
                }
            }
        }
    }

    /**
     * An attempt came up.
     *
     * @param old the lane it rebuilt
     * @param next the new lane
     * @return whether the endpoint still wants it (else the caller closes it)
     */
    boolean succeeded(L old, L next) {
        State s = lanes.remove(old);
        if (s == null || !old.wantsRecovery()) {
            return false;
        }
        next.upAgain(s.backoff, clock.getAsLong());
        return true;
    }

    /**
     * An attempt failed (refused, or a channel failed while wiring).
     *
     * @param old the lane it was to rebuild
     * @param why for the log
     */
    void failed(L old, String why) {
        State s = lanes.get(old);
        if (s == null) {
            return;
        }
        s.dial = 0;
        if (!retry(old, s, clock.getAsLong(), why)) {
            lanes.remove(old);
        }
    }

    /** @return whether another attempt is scheduled (false: the policy gave up) */
    private boolean retry(L lane, State s, long now, String why) {
        ReconnectPolicy.Backoff next = policy.failed(s.backoff, now);
        if (next == null) {
            LOG.warn("ucx {}: gave up reconnecting {} after {} s ({})", workerName, lane,
                    (now - s.backoff.failedAt()) / 1_000_000_000L, why);
            return false;
        }
        LOG.debug("ucx {}: reconnecting {} failed ({}); next attempt in about {} ms", workerName, lane, why,
                next.delayNanos() / 1_000_000);
        s.backoff = next;
        s.nextAt = now + ReconnectPolicy.jittered(next, random.getAsLong());
        return true;
    }

    /** @return lanes being reconnected */
    int size() {
        return lanes.size();
    }
}
