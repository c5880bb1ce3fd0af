package dev.fenceline.transport.tcp;

import io.netty.channel.IoEventLoopGroup;
import io.netty.channel.IoHandlerContext;
import io.netty.channel.IoHandlerFactory;
import io.netty.channel.SingleThreadIoEventLoop;
import java.util.concurrent.Executor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.locks.LockSupport;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Netty's event loop on a thread of its own, whose I/O and tasks can be lent to another thread for
 * a while ({@link #lend}): while lent, only the borrower runs them, in its {@link Loan#poll} calls,
 * and the loop's own thread waits. A thread that polls memory a peer puts into, or a future, then
 * reads the socket itself: no thread is woken between a frame's arrival and its handling, and the
 * polling thread and the event loop no longer take turns on the same cores.
 *
 * <p>Netty's contract is kept: one thread at a time is in the loop ({@link #inEventLoop(Thread)}
 * names the borrower while it polls, the own thread otherwise), the own thread hands over only
 * between two turns of its loop, and every hand-over is a write and read of one atomic state, which
 * publishes what the thread before wrote. A borrower's {@link Loan#poll} does not wait for I/O;
 * what it runs (an active-message handler run inline, a callback) may take as long as it takes.
 */
final class LendingEventLoop extends SingleThreadIoEventLoop {
    private static final Logger LOG = LoggerFactory.getLogger(LendingEventLoop.class);
    /** How often a waiting own thread looks whether its borrower still polls. */
    private static final long CHECK_NANOS = TimeUnit.MILLISECONDS.toNanos(10);
    /** About how long a borrower's poll runs tasks (Netty looks at the clock every 64 tasks). */
    private static final long TASKS_NANOS = TimeUnit.MICROSECONDS.toNanos(500);
    /** The longest a borrower waits for the own thread to hand over. */
    private static final long HAND_OVER_NANOS = TimeUnit.SECONDS.toNanos(10);
    private static final Runnable WAKE = () -> { };

    /** A borrower's poll: ready I/O only, never a wait in epoll_wait. */
    private static final IoHandlerContext NOW = new IoHandlerContext() {
        @Override
        public boolean canBlock() {
            return false;
        }

        @Override
        public long delayNanos(long currentTimeNanos) {
            return 0;
        }

        @Override
        public long deadlineNanos() {
            return -1;
        }
    };

    /** Wanted by a thread, not handed over yet. */
    private record Wanted(Thread by) {
    }

    /** Handed over by {@code from} to {@code to}; {@code polling} while {@code to} is in a {@link Loan#poll}. */
    private record Lent(Thread to, Thread from, boolean polling) {
    }

    /** null (the own thread runs the loop), {@link Wanted} or {@link Lent}. */
    private final AtomicReference<Object> state = new AtomicReference<>();

    LendingEventLoop(IoEventLoopGroup parent, Executor executor, IoHandlerFactory handlers) {
        super(parent, executor, handlers);
    }

    /**
     * The borrower is in the loop only inside its polls: between them what it asks of a channel is
     * queued as a task, which its next poll runs. So the own thread can take the loop back (the
     * loop shuts down, the borrower died) whenever the borrower is not polling, and never two
     * threads run it at once.
     */
    @Override
    public boolean inEventLoop(Thread thread) {
        Object s = state.get();
        return s instanceof Lent l ? l.polling && l.to == thread : super.inEventLoop(thread);
    }

    /** @return whether the loop is lent now */
    boolean lent() {
        return state.get() instanceof Lent;
    }

    @Override
    protected int runIo() {
        if (state.get() instanceof Wanted) {
            handOver();
        }
        return super.runIo();
    }

    /**
     * On the own thread, between two turns: hands the loop over and waits for it back. It takes the
     * loop back itself, while the borrower is not polling, when the loop shuts down, when the
     * borrower has ended, or when the borrower was found blocked or parked at two looks in a row
     * (10 ms apart): it waits for something else then, perhaps for what only this loop can bring
     * (an answer, a worker's close), and nothing else would run the loop meanwhile.
     */
    private void handOver() {
        Thread own = Thread.currentThread();
        if (!(state.get() instanceof Wanted w) || !state.compareAndSet(w, new Lent(w.by, own, false))) {
            return; // the borrower gave up meanwhile
        }
        boolean interrupted = Thread.interrupted(); // a set flag would make every park return at once
        try {
            for (int waitingLooks = 0;;) {
                Object s = state.get();
                if (!(s instanceof Lent l) || l.from != own) {
                    return; // given back
                }
                String why = null; // set: take it back ("": without a warning)
                if (isShuttingDown()) {
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
                        LOG.warn("tcp: {} {} while it held an event loop's I/O (Worker.progressHere()); the loop's"
                                + " own thread runs it again", l.to.getName(), why);
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
     * @throws IllegalStateException if the calling thread is this loop's, another thread holds or
     *     wants it, the loop is shutting down, or the own thread did not hand over in time
     */
    Loan lend(Runnable whileWaiting) {
        Thread me = Thread.currentThread();
        if (super.inEventLoop(me)) {
            throw new IllegalStateException(me.getName() + " is this event loop's own thread");
        }
        if (isShuttingDown()) {
            throw new IllegalStateException("the event loop is shutting down");
        }
        Wanted want = new Wanted(me);
        if (!state.compareAndSet(null, want)) {
            Object s = state.get();
            throw new IllegalStateException("the event loop is already " + (s instanceof Lent l ? "lent to "
                    + l.to.getName() : s instanceof Wanted w ? "wanted by " + w.by.getName() : "taken"));
        }
        try {
            execute(WAKE); // out of epoll_wait: its next turn hands over
        } catch (java.util.concurrent.RejectedExecutionException e) {
            state.compareAndSet(want, null);
            throw new IllegalStateException("the event loop is shutting down", e);
        }
        long deadline = System.nanoTime() + HAND_OVER_NANOS;
        Object s;
        for (int spins = 0; (s = state.get()) == want; spins++) {
            if ((spins & 255) == 255 && (isShuttingDown() || System.nanoTime() - deadline > 0)
                    && state.compareAndSet(want, null)) {
                throw new IllegalStateException("the event loop " + (isShuttingDown() ? "is shutting down"
                        : "did not hand over within " + TimeUnit.NANOSECONDS.toSeconds(HAND_OVER_NANOS) + " s"));
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
        throw new IllegalStateException("the event loop is shutting down");
    }

    /** The loop, lent to one thread until it closes this (or the own thread takes it back). */
    final class Loan implements AutoCloseable {
        private final Lent idle;
        private final Lent polling;
        /** Closed from within a poll (a callback it ran): given back as that poll ends. */
        private boolean closeAfterPoll;

        private Loan(Lent idle) {
            this.idle = idle;
            this.polling = new Lent(idle.to, idle.from, true);
        }

        /**
         * Runs the I/O that is ready now and the tasks that are due, on the borrower's thread,
         * without waiting for I/O. Once the loan has ended (closed, or taken back) it does nothing,
         * and so does a poll from within a poll (a callback the poll ran).
         *
         * @return how many I/O events and task runs it handled
         * @throws IllegalStateException if called from another thread than the borrower
         */
        int poll() {
            checkBorrower("polled");
            if (!state.compareAndSet(idle, polling)) {
                return 0;
            }
            try {
                if (isShuttingDown()) {
                    return 0; // ended below: the own thread runs the shutdown
                }
                int n = ioHandler().run(NOW);
                if (runAllTasks(TASKS_NANOS)) {
                    n++;
                }
                return n;
            } finally {
                boolean ending = closeAfterPoll || isShuttingDown();
                state.set(ending ? null : idle);
                if (ending) {
                    LockSupport.unpark(idle.from);
                }
            }
        }

        /** @return whether the loop is still lent to this borrower */
        boolean open() {
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

        private void checkBorrower(String what) {
            if (Thread.currentThread() != idle.to) {
                throw new IllegalStateException(what + " by " + Thread.currentThread().getName() + "; lent to "
                        + idle.to.getName());
            }
        }
    }
}
