package dev.fenceline.internal;

import java.util.Arrays;

/**
 * Keepalive for one endpoint's lanes, as arithmetic on times: a lane not heard from for an interval
 * gets a probe (a remote flush); a probe unanswered past the timeout, with nothing else heard from
 * the lane meanwhile, is a lane failure. While the endpoint is quiet (nothing it accepted waits for
 * a lane) the interval is the longer idle interval: a dead lane then strands nothing, and many idle
 * endpoints do not cost a probe per lane per interval; once work waits, a lane silent for the
 * (short) interval is probed at the next tick. Holds when each slot was last heard from and when its
 * unanswered probe went out; reads no clock and calls nothing (the endpoint passes the time in and
 * sends the probes), so it is tested without actors.
 */
public final class Keepalive {
    /**
     * What one tick found.
     *
     * @param probes the slots to probe now (their probes count as sent)
     * @param failed a slot whose probe is overdue, or -1; slots after it were not looked at
     */
    public record Tick(long probes, int failed) {
        /** Nothing to do. */
        public static final Tick QUIET = new Tick(0, -1);
    }

    private final long interval;
    private final long idleInterval;
    private final long timeout;
    private long[] lastHeard = new long[0];
    private long[] probeSent = new long[0];

    /**
     * @param intervalNanos how long a lane may be silent before it is probed
     * @param timeoutNanos how long a probe may go unanswered
     */
    public Keepalive(long intervalNanos, long timeoutNanos) {
        this(intervalNanos, intervalNanos, timeoutNanos);
    }

    /**
     * @param intervalNanos how long a lane may be silent before it is probed while work waits
     * @param idleIntervalNanos how long while the endpoint is quiet (never shorter than the interval)
     * @param timeoutNanos how long a probe may go unanswered
     */
    public Keepalive(long intervalNanos, long idleIntervalNanos, long timeoutNanos) {
        this.interval = intervalNanos;
        this.idleInterval = Math.max(intervalNanos, idleIntervalNanos);
        this.timeout = timeoutNanos;
    }

    /**
     * @param slots the lane table's size now; new slots count as heard from at {@code now}
     * @param now the time
     */
    public void resize(int slots, long now) {
        if (lastHeard.length == slots) {
            return;
        }
        int old = lastHeard.length;
        lastHeard = Arrays.copyOf(lastHeard, slots);
        probeSent = Arrays.copyOf(probeSent, slots);
        for (int i = old; i < slots; i++) {
            lastHeard[i] = now;
        }
    }

    /**
     * @param slot a slot something was heard from
     * @param now the time
     */
    public void heard(int slot, long now) {
        if (slot >= 0 && slot < lastHeard.length) {
            lastHeard[slot] = now;
        }
    }

    /**
     * Slots whose connection changed start afresh: heard from now, no probe out.
     *
     * @param slots the changed slots
     * @param now the time
     */
    public void reset(long slots, long now) {
        for (int i = 0; i < lastHeard.length; i++) {
            if ((slots & (1L << i)) != 0) {
                lastHeard[i] = now;
                probeSent[i] = 0;
            }
        }
    }

    /**
     * The peer may be gone (a hint from outside, such as a cluster's failure detector): every slot
     * without a probe out counts as silent for the whole (idle) interval, so the next {@link #tick} probes
     * it, and it fails if that probe goes unanswered for the timeout. Slots with a probe out keep it.
     *
     * @param now the time
     */
    public void suspect(long now) {
        for (int i = 0; i < lastHeard.length; i++) {
            if (probeSent[i] == 0) {
                lastHeard[i] = Math.min(lastHeard[i], now - idleInterval); // probed at the next tick, quiet or not
            }
        }
    }

    /** @param slot a slot whose probe was answered */
    public void probeAnswered(int slot) {
        if (slot >= 0 && slot < probeSent.length) {
            probeSent[slot] = 0;
        }
    }

    /**
     * @param slot a slot
     * @return whether a probe of it is out unanswered
     */
    public boolean probing(int slot) {
        return probeSent[slot] != 0;
    }

    /**
     * When a tick of a quiet endpoint could next do something, so that the worker need not tick it
     * before (work that comes to wait for a lane sooner must bring its ticks back).
     *
     * @param live the live slots
     * @return the earliest time a live slot is due a probe or its probe is overdue; Long.MAX_VALUE if none
     */
    public long nextQuietDue(long live) {
        long due = Long.MAX_VALUE;
        for (int i = 0; i < lastHeard.length; i++) {
            if ((live & (1L << i)) != 0) {
                due = Math.min(due, probeSent[i] != 0 ? Math.max(probeSent[i], lastHeard[i]) + timeout + 1
                        : lastHeard[i] + idleInterval);
            }
        }
        return due;
    }

    /**
     * A tick while work waits.
     *
     * @param now the time
     * @param live the live slots
     * @return the probes to send and the slot that failed, if any
     */
    public Tick tick(long now, long live) {
        return tick(now, live, false);
    }

    /**
     * @param now the time
     * @param live the live slots
     * @param quiet whether nothing the endpoint accepted waits for a lane (the idle interval applies)
     * @return the probes to send and the slot that failed, if any
     */
    public Tick tick(long now, long live, boolean quiet) {
        long silence = quiet ? idleInterval : interval;
        long probes = 0;
        for (int i = 0; i < lastHeard.length; i++) {
            if ((live & (1L << i)) == 0) {
                continue;
            }
            if (probeSent[i] != 0 && now - probeSent[i] > timeout && now - lastHeard[i] > timeout) {
                return new Tick(probes, i);
            }
            if (probeSent[i] == 0 && now - lastHeard[i] >= silence) {
                probeSent[i] = now;
                probes |= 1L << i;
            }
        }
        return probes == 0 ? Tick.QUIET : new Tick(probes, -1);
    }
}
