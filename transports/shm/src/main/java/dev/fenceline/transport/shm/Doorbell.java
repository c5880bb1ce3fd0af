package dev.fenceline.transport.shm;

import java.lang.invoke.VarHandle;
import jnr.ffi.Pointer;
import org.agrona.concurrent.UnsafeBuffer;

/**
 * A worker's doorbell, two words in its control segment's header: the bell, a futex word that
 * counts rings, and a flag that says the worker's polling thread is about to sleep or asleep on it.
 * Whoever hands the polling thread work (a peer process committing a record in the inbox, a thread
 * of this process queueing something for it) rings afterwards; a ring costs a fence and a read
 * while the polling thread is awake, and one system call when it sleeps.
 *
 * <p>No ring is lost: the polling thread reads the bell, raises the flag, and only then looks for
 * work one last time before it sleeps on the value it read; a producer publishes its work, then
 * reads the flag. Either the last look sees the work, or the producer sees the flag, moves the
 * bell on and wakes the sleeper (whose sleep then ends, or never starts, because the bell moved).
 * The words are shared with peer processes, which may write anything there: at worst a sleep lasts
 * its bound, or a producer makes a needless system call.
 */
final class Doorbell {
    /** The bell's offset in the control segment's header. */
    static final int BELL = 56;
    /** The flag's offset. */
    static final int ASLEEP = 60;

    private static final boolean FUTEXES = Futex.unavailable() == null;

    private final UnsafeBuffer header;
    private final long bell;
    /** The polling thread's own timeout, made at its first sleep. */
    private Pointer timespec;

    /** @param header a control segment's header, mapped in this process */
    Doorbell(UnsafeBuffer header) {
        this.header = header;
        this.bell = header.addressOffset() + BELL;
    }

    /** @return whether rings can wake a sleeper here (futexes work) */
    static boolean available() {
        return FUTEXES;
    }

    /** Any thread of any process: work for this worker's polling thread was published just before. */
    void ring() {
        if (!FUTEXES) {
            return; // nobody here sleeps on a doorbell, and a peer's sleep ends at its bound
        }
        VarHandle.fullFence(); // the work is visible before the flag is read
        if (header.getIntVolatile(ASLEEP) != 0 && header.compareAndSetInt(ASLEEP, 1, 0)) {
            header.getAndAddInt(BELL, 1);
            Futex.wake(bell);
        }
    }

    /**
     * The polling thread, before its last look for work: from now on a ring wakes it.
     *
     * @return the bell's value, to sleep on
     */
    int arm() {
        int value = header.getIntVolatile(BELL);
        header.putIntVolatile(ASLEEP, 1);
        VarHandle.fullFence(); // the flag is visible before the last look reads anything
        return value;
    }

    /**
     * The polling thread, after a last look that found nothing: sleeps until a ring moves the bell
     * past {@code armed}, or the time passes.
     *
     * @param armed what {@link #arm} returned
     * @param nanos the longest sleep
     */
    void sleep(int armed, long nanos) {
        if (timespec == null) {
            timespec = Futex.timespec();
        }
        Futex.await(bell, armed, nanos, timespec);
    }

    /** The polling thread, awake again: rings need not wake it. */
    void disarm() {
        header.putIntOrdered(ASLEEP, 0);
    }
}
