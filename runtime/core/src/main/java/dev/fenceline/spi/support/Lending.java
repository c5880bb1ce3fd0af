package dev.fenceline.spi.support;

import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.locks.LockSupport;
import java.util.function.BooleanSupplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The hand-over of a polling loop (an event loop, a progress agent) between the thread that runs
 * it and a thread that borrows it for a while ({@link dev.fenceline.Worker#progressHere()}): the
 * loop's own thread offers it between two turns ({@link #handOverIfWanted}) and waits; the
 * borrower runs the loop's work only inside its polls ({@link Loan#poll});
 * the borrower gives it back ({@link Loan#close}), or the own thread takes it back, while the
 * borrower is not polling, when the loop ends, the borrower has ended, or the borrower was found
 * blocked or parked at two looks 10 ms apart (it may wait for what only this loop brings). One
 * atomic state orders every step, so one thread at a time runs the loop, and each sees what the
 * one before wrote.
 */
public final class Lending {
    private static final Logger LOG = LoggerFactory.getLogger(Lending.class);
    /** How often a waiting own thread looks whether its borrower still polls. */
    private static final long CHECK_NANOS = TimeUnit.MILLISECONDS.toNanos(10);
    /** How often a borrower waiting for the hand-over wakes the own thread again. */
    private static final long REWAKE_NANOS = TimeUnit.MILLISECONDS.toNanos(1);
    /** The longest a borrower waits for the own thread to hand over. */
    private static final long HAND_OVER_NANOS = TimeUnit.SECONDS.toNanos(10);

    /** Wanted by a thread, not handed over yet. */
    private record Wanted(Thread by) {
    }

    /** Handed over by {@code from} to {@code to}; {@code polling} while {@code to} is in a poll. */
    private record Lent(Thread to, Thread from, boolean polling) {
    }

    private final String what;
    private final Runnable wakeOwner;
    private final BooleanSupplier ending;
    /** null (the own thread runs the loop), {@link Wanted} or {@link Lent}. */
    private final AtomicReference<Object> state = new AtomicReference<>();

    /**
     * @param what the loop, for messages ("an event loop", "a progress agent")
     * @param wakeOwner ends the own thread's wait for work (any thread may call it)
     * @param ending whether the loop is shutting down (then it is not lent, and taken back)
     */
    public Lending(String what, Runnable wakeOwner, BooleanSupplier ending) {
        this.what = what;
        this.wakeOwner = wakeOwner;
        this.ending = ending;
    }

    /**
     * @param thread a thread
     * @return whether it is the borrower, inside a poll; null if the loop is not lent (then the
     *     own thread is the one in the loop)
     */
    public Boolean borrowerPolling(Thread thread) {
        return state.get() instanceof Lent l ? l.polling && l.to == thread : null;
    }

    /** @return whether the loop is lent now */
    public boolean lent() {
        return state.get() instanceof Lent;
    }

    /** On the own thread, between two turns: if a thread wants the loop, hands it over and waits for it back. */
    public void handOverIfWanted() {
        if (!(state.get() instanceof Wanted w)) {
            return;
        }
        Thread own = Thread.currentThread();
        if (!state.compareAndSet(w, new Lent(w.by, own, false))) {
            return; // the borrower gave up meanwhile
        }
        boolean interrupted = false; // a set flag would make every park return at once
        try {
            for (int waitingLooks = 0;;) {
                interrupted |= Thread.interrupted();
                Object s = state.get();
                if (!(s instanceof Lent l) || l.from != own) {
                    return; // given back
                }
                String why = null; // set: take it back ("": without a warning)
                if (ending.getAsBoolean()) {
                    why = "";
                } else if (!l.to.isAlive()) {
                    why = "ended";
                } else if (!l.polling && waiting(l.to)) {
                    why = ++waitingLooks >= 2 ? "was blocked or parked for 10 ms or more" : null;
                } else {
                    waitingLooks = 0;
                }
                if (why != null && !l.polling && state.compareAndSet(s, null)) {
                    if (!why.isEmpty()) {
                        LOG.warn("{} {} while it held {} (Worker.progressHere()); the loop's own thread runs it again",
                                l.to.getName(), why, what);
                    }
                    return;
                }
                LockSupport.parkNanos(this, CHECK_NANOS);
            }
        } finally {
            if (interrupted) {
                Thread.currentThread().interrupt();
            }
        }
    }

    private static boolean waiting(Thread t) {
        Thread.State st = t.getState();
        return st == Thread.State.BLOCKED || st == Thread.State.WAITING || st == Thread.State.TIMED_WAITING;
    }

    /**
     * Takes the loop for the calling thread, after the own thread's current turn.
     *
     * @param whileWaiting run on each turn of the wait for the hand-over (the caller's other loans
     *     keep being polled), or null
     * @return the loan, which the calling thread polls and closes
     * @throws IllegalStateException if another thread holds or wants the loop, the loop is ending,
     *     or the own thread did not hand over in time
     */
    public Loan lend(Runnable whileWaiting) {
        Thread me = Thread.currentThread();
        if (ending.getAsBoolean()) {
            throw new IllegalStateException(what + " is shutting down");
        }
        Wanted want = new Wanted(me);
        if (!state.compareAndSet(null, want)) {
            Object s = state.get();
            throw new IllegalStateException(what + " is already " + (s instanceof Lent l ? "lent to "
                    + l.to.getName() : s instanceof Wanted w ? "wanted by " + w.by.getName() : "taken"));
        }
        wake(want); // out of its wait: its next turn hands over
        long deadline = System.nanoTime() + HAND_OVER_NANOS;
        long wokenAt = System.nanoTime();
        Object s;
        for (int spins = 0; (s = state.get()) == want; spins++) {
            if ((spins & 255) == 255) {
                long now = System.nanoTime();
                if ((ending.getAsBoolean() || now - deadline > 0) && state.compareAndSet(want, null)) {
                    throw new IllegalStateException(what + (ending.getAsBoolean() ? " is shutting down"
                            : " did not hand over within " + TimeUnit.NANOSECONDS.toSeconds(HAND_OVER_NANOS) + " s"));
                }
                if (now - wokenAt > REWAKE_NANOS) { // a wake that came just before the owner began to wait is lost
                    wokenAt = now;
                    wake(want);
                }
            }
            if (whileWaiting != null) {
                whileWaiting.run();
            }
            if (spins < 100) {
                Thread.onSpinWait();
            } else {
                Thread.yield();
            }
        }
        if (s instanceof Lent l && l.to == me && !l.polling) {
            return new Loan(l);
        }
        // Handed over and taken back at once (the loop began to shut down): nothing is lent.
        throw new IllegalStateException(what + " is shutting down");
    }

    /** Wakes the own thread for the hand-over; one that cannot be woken (shut down) refuses the loan. */
    private void wake(Wanted want) {
        try {
            wakeOwner.run();
        } catch (RuntimeException e) {
            if (state.compareAndSet(want, null)) {
                throw new IllegalStateException(what + " is shutting down", e);
            }
        }
    }

    /** The loop, lent to one thread until it closes this (or the own thread takes it back). */
    public final class Loan implements AutoCloseable {
        private final Lent idle;
        private final Lent polling;
        /** Closed from within a poll (a callback it ran): given back as that poll ends. */
        private boolean closeAfterPoll;

        private Loan(Lent idle) {
            this.idle = idle;
            this.polling = new Lent(idle.to, idle.from, true);
        }

        /**
         * Runs one poll's work on the borrower's thread, in the loop: nothing once the loan has ended
         * (closed, or taken back), nor from within a poll (a callback the poll ran polls again). The
         * loan ends as the poll does if it was closed meanwhile or the loop is ending.
         *
         * @param work the poll's work (made once by the caller: this runs for every poll)
         * @return what the work returned, or 0 if it did not run
         * @throws IllegalStateException if called from another thread than the borrower
         */
        public int poll(java.util.function.IntSupplier work) {
            checkBorrower("polled");
            if (!state.compareAndSet(idle, polling)) {
                return 0;
            }
            try {
                return ending.getAsBoolean() ? 0 : work.getAsInt();
            } finally {
                boolean end = closeAfterPoll || ending.getAsBoolean();
                state.set(end ? null : idle);
                if (end) {
                    LockSupport.unpark(idle.from);
                }
            }
        }

        /** @return whether the loop is still lent to this borrower */
        public boolean open() {
            Object s = state.get();
            return s == idle || s == polling;
        }

        /**
         * Gives the loop back to its own thread: at once, or, called from within a poll, as that
         * poll ends. Again, or once taken back: nothing. Only the borrower may.
         */
        @Override
        public void close() {
            checkBorrower("closed");
            if (state.get() == polling) {
                closeAfterPoll = true;
            } else if (state.compareAndSet(idle, null)) {
                LockSupport.unpark(idle.from);
            }
        }

        private void checkBorrower(String action) {
            if (Thread.currentThread() != idle.to) {
                throw new IllegalStateException(what + " " + action + " by " + Thread.currentThread().getName()
                        + "; lent to " + idle.to.getName());
            }
        }
    }
}
