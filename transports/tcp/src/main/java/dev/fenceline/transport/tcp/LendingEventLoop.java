package dev.fenceline.transport.tcp;

import dev.fenceline.spi.support.Lending;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.IoEventLoopGroup;
import io.netty.channel.IoHandlerContext;
import io.netty.channel.IoHandlerFactory;
import io.netty.channel.SingleThreadIoEventLoop;
import java.util.ArrayDeque;
import java.util.concurrent.Executor;
import java.util.concurrent.TimeUnit;

/**
 * Netty's event loop on a thread of its own, whose I/O and tasks can be lent to another thread for
 * a while ({@link #lend}): while lent, only the borrower runs them, in its {@link Loan#progress} calls,
 * and the loop's own thread waits. A thread that polls memory a peer puts into, or a future, then
 * reads the socket itself: no thread is woken between a frame's arrival and its handling, and the
 * polling thread and the event loop no longer take turns on the same cores.
 *
 * <p>Netty's contract is kept: one thread at a time is in the loop ({@link #inEventLoop(Thread)}
 * names the borrower while it polls, the own thread otherwise), the own thread hands over only
 * between two turns of its loop, and every hand-over is a write and read of one atomic state, which
 * publishes what the thread before wrote. A borrower's {@link Loan#progress} does not wait for I/O;
 * what it runs (an active-message handler run inline, a callback) may take as long as it takes.
 */
final class LendingEventLoop extends SingleThreadIoEventLoop {
    /** About how long a borrower's poll runs tasks (Netty looks at the clock every 64 tasks). */
    private static final long TASKS_NANOS = TimeUnit.MICROSECONDS.toNanos(500);
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

    /**
     * Channels whose writes a borrower's poll left unflushed ({@link #flushAfterPoll}): flushed as
     * the next poll starts, or as the own thread takes the loop back. Touched only by the thread in
     * the loop.
     */
    private final ArrayDeque<ChannelHandlerContext> unflushed = new ArrayDeque<>();

    /**
     * A borrower's poll (made once, not per poll): first the tasks queued since the last (the
     * borrower's own frames among them, which then leave before the answers the last poll held
     * back), those answers, the ready I/O, then the tasks that I/O queued.
     */
    private final java.util.function.IntSupplier runReady = () -> {
        int n = runAllTasks(TASKS_NANOS) ? 1 : 0;
        flushLeft();
        n += ioHandler().run(NOW);
        return runAllTasks(TASKS_NANOS) ? n + 1 : n;
    };

    private final Lending lending = new Lending("a tcp event loop's I/O", () -> execute(WAKE), this::isShuttingDown);

    LendingEventLoop(IoEventLoopGroup parent, Executor executor, IoHandlerFactory handlers) {
        super(parent, executor, handlers);
    }

    /**
     * The borrower is in the loop only inside its polls: between them what it asks of a channel is
     * queued as a task, which its next poll runs. So the own thread can take the loop back (the
     * loop shuts down, the borrower ended or blocks) whenever the borrower is not polling, and
     * never two threads run it at once.
     */
    @Override
    public boolean inEventLoop(Thread thread) {
        Lending l = lending; // null while Netty's constructors run
        Boolean borrower = l == null ? null : l.borrowerPolling(thread);
        return borrower != null ? borrower : super.inEventLoop(thread);
    }

    /** @return whether the loop is lent now */
    boolean lent() {
        return lending.lent();
    }

    @Override
    protected int runIo() {
        lending.handOverIfWanted();
        flushLeft();
        return super.runIo();
    }

    /**
     * Flushes a channel's writes now, or, in a borrower's poll, as its next poll starts (or the own
     * thread takes the loop back). A borrower polls for what its peer put (a ping-pong's ping, a
     * flag): the answers a poll's read earned then leave after the borrower has seen what the poll
     * applied and written its own frame, not before, and their write, which over loopback runs
     * the peer's receive path on this thread, is off the way from a peer's frame to the borrower.
     * The borrower's own frames are not held: they are written directly, not through here.
     * Called in the loop only.
     */
    void flushAfterPoll(ChannelHandlerContext c) {
        if (Boolean.TRUE.equals(lending.borrowerPolling(Thread.currentThread()))) {
            unflushed.add(c);
        } else {
            c.flush();
        }
    }

    private void flushLeft() {
        ChannelHandlerContext c;
        while ((c = unflushed.poll()) != null) {
            c.flush();
        }
    }

    /**
     * Takes the loop for the calling thread, after the own thread's current turn.
     *
     * @param whileWaiting run on each turn of the wait for the hand-over, or null
     * @return the loan, which the calling thread polls and closes
     * @throws IllegalStateException if the calling thread is this loop's, another thread holds or
     *     wants it, the loop is shutting down, or the own thread did not hand over in time
     */
    Loan lend(Runnable whileWaiting) {
        if (super.inEventLoop(Thread.currentThread())) {
            throw new IllegalStateException(Thread.currentThread().getName() + " is this event loop's own thread");
        }
        return new Loan(lending.lend(whileWaiting));
    }

    /** The loop, lent to one thread until it closes this (or the own thread takes it back). */
    final class Loan implements dev.fenceline.CallerProgress {
        private final Lending.Loan loan;

        private Loan(Lending.Loan loan) {
            this.loan = loan;
        }

        /**
         * Runs the I/O that is ready now and the tasks that are due, on the borrower's thread,
         * without waiting for I/O. Once the loan has ended (closed, or taken back) it does nothing,
         * and so does a poll from within a poll (a callback the poll ran).
         *
         * @return how many I/O events and task runs it handled
         * @throws IllegalStateException if called from another thread than the borrower
         */
        @Override
        public int progress() {
            return loan.poll(runReady);
        }

        /** @return whether the loop is still lent to this borrower */
        boolean open() {
            return loan.open();
        }

        /** Gives the loop back to its own thread (from within a poll: as it ends). Only the borrower may. */
        @Override
        public void close() {
            loan.close();
        }
    }
}
