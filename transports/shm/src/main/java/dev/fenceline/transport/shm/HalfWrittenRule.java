package dev.fenceline.transport.shm;

import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;

/**
 * When the record at an inbox's read position may be skipped because a producer process died
 * between claiming and committing it: arithmetic on ring positions and times, kept apart from the
 * ring so it is tested alone. Two threads use it: the transport actor looks at every housekeeping
 * tick ({@link #tick}) and asks; the polling thread, the ring's only reader, notes deaths
 * ({@link #deathSeen}) and carries out what was asked ({@link #take}).
 *
 * <p>A record below the write position noted at a death was claimed before that death was seen, so
 * it may be the dead process's; once the read position has stood still at it from one tick to the
 * next it is skipped (a live producer commits in microseconds). A record claimed after every death
 * seen is never skipped for one: a slow or stopped producer that lives still commits. Only a process
 * the worker never knew (it died before it connected) leaves no death to note: then the read
 * position must stand still for {@code unblockAfter}, and the directory must show a process gone.
 */
final class HalfWrittenRule {
    /** What a tick decided. */
    enum Verdict {
        /** The read position moves, or nothing waits. */
        NONE,
        /** Skip the record at the read position (asked of the polling thread). */
        UNBLOCK,
        /** Skip it if the directory shows some process gone (then say {@link #staleRemoved}). */
        UNBLOCK_IF_SOME_PROCESS_DIED
    }

    private final long unblockAfterNanos;
    /** Polling thread writes: records below this position were claimed before a death was seen; -1: none. */
    private volatile long suspectBelow = -1;
    private final AtomicBoolean staleRemoved = new AtomicBoolean();
    /** The read position the actor found stuck, for the polling thread; -1: none. */
    private final AtomicLong unblockAt = new AtomicLong(-1);
    /** Actor thread: the read position at the last tick, or -1 when nothing waited. */
    private long lastPosition = -1;
    private long stuckSince;

    /** @param unblockAfterNanos how long the read position stands still before a never-known process's record is skipped */
    HalfWrittenRule(long unblockAfterNanos) {
        this.unblockAfterNanos = unblockAfterNanos;
    }

    /**
     * Transport actor, every housekeeping tick.
     *
     * @param now the time, in nanoseconds
     * @param readPosition the ring's read position
     * @param writePosition the ring's write position
     * @return what to do; for {@link Verdict#UNBLOCK} the request is made already
     */
    Verdict tick(long now, long readPosition, long writePosition) {
        if (writePosition == readPosition) {
            lastPosition = -1; // nothing waits: a record claimed from now on is new at the next look
            return Verdict.NONE;
        }
        if (readPosition != lastPosition) {
            lastPosition = readPosition;
            stuckSince = now;
            return Verdict.NONE;
        }
        if (readPosition < suspectBelow) {
            unblockAt.set(readPosition);
            return Verdict.UNBLOCK;
        }
        return now - stuckSince > unblockAfterNanos ? Verdict.UNBLOCK_IF_SOME_PROCESS_DIED : Verdict.NONE;
    }

    /**
     * Transport actor: after {@link Verdict#UNBLOCK_IF_SOME_PROCESS_DIED}, the directory showed a
     * process gone: every record claimed so far is suspect, and the stuck one is asked to be skipped.
     *
     * @param readPosition the read position that tick found stuck
     */
    void staleRemoved(long readPosition) {
        staleRemoved.set(true);
        unblockAt.set(readPosition);
    }

    /**
     * Polling thread: a peer process was found gone (not merely a worker closed: its process
     * finishes what it claimed), or (said by the actor) the directory showed one.
     *
     * @param writePosition the ring's write position now
     */
    void deathSeen(long writePosition) {
        suspectBelow = writePosition;
    }

    /** @return whether {@link #take} has anything to do (two plain reads: asked on every polling pass) */
    boolean asked() {
        return unblockAt.get() >= 0 || staleRemoved.get();
    }

    /**
     * Polling thread, when {@link #asked}: notes a death the actor reported, and takes its request.
     *
     * @param writePosition the ring's write position now
     * @param readPosition the ring's read position now
     * @return true if the record at the read position is to be skipped now
     */
    boolean take(long writePosition, long readPosition) {
        if (staleRemoved.get() && staleRemoved.getAndSet(false)) {
            suspectBelow = writePosition;
        }
        long stuck = unblockAt.get();
        if (stuck < 0) {
            return false;
        }
        unblockAt.set(-1); // a request made meanwhile is made again at the next tick, if still stuck
        return stuck == readPosition && stuck < suspectBelow;
    }
}
