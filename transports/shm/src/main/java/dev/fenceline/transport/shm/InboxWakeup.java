package dev.fenceline.transport.shm;

import dev.fenceline.spi.Wakeup;

/**
 * How the polling thread of an idle shm worker sleeps: on its inbox's {@link Doorbell}, which peer
 * processes ring after every record they commit there and this process's threads ring after
 * queueing anything for the polling thread. Asleep, the thread costs nothing until there is work.
 * While something must be polled again whatever happens (a lane with completions to report or an
 * endpoint waiting for room, replies waiting for room in a peer's ring, a record a producer has
 * claimed and not committed), it sleeps at most the short bound; with nothing at all, up to the
 * long one.
 */
final class InboxWakeup implements Wakeup {
    /** What the polling thread has, as it is about to sleep. */
    enum Idleness {
        /** Work arrived since the last pass: do not sleep. */
        WORK,
        /** Something needs polling again soon: sleep briefly. */
        POLL_AGAIN,
        /** Nothing: sleep until rung. */
        QUIET
    }

    /** The polling thread's own view of what it has. */
    interface Looker {
        /** @return what there is to do, looked at once the doorbell is armed */
        Idleness look();
    }

    private final Doorbell doorbell;
    private final Looker looker;
    private final long shortNanos;
    private final long longNanos;

    /**
     * @param doorbell the worker's own
     * @param looker the polling thread's last look
     * @param shortNanos the longest sleep while something needs polling again
     * @param longNanos the longest sleep with nothing to do
     */
    InboxWakeup(Doorbell doorbell, Looker looker, long shortNanos, long longNanos) {
        this.doorbell = doorbell;
        this.looker = looker;
        this.shortNanos = shortNanos;
        this.longNanos = longNanos;
    }

    @Override
    public void await(long timeoutNanos) {
        int armed = doorbell.arm();
        try {
            switch (looker.look()) {
                case WORK -> { }
                case POLL_AGAIN -> doorbell.sleep(armed, Math.min(timeoutNanos, shortNanos));
                case QUIET -> doorbell.sleep(armed, timeoutNanos);
            }
        } finally {
            doorbell.disarm();
        }
    }

    @Override
    public void wake() {
        doorbell.ring();
    }

    /** A pass polls memory: cheap enough to spin on before yielding. */
    @Override
    public int spinsBeforeWait() {
        return 100;
    }

    /** Every piece of work rings: a quiet worker may sleep up to the long bound. */
    @Override
    public long maxWaitNanos(long configured) {
        return Math.max(configured, longNanos);
    }
}
