package dev.fenceline;

/**
 * A worker's I/O, run by the thread that took it ({@link Worker#progressHere()}) until that thread
 * closes this. For a thread that polls (memory a peer puts into, an operation's future) and would
 * otherwise wait for a transport's own thread to be woken by the kernel and then to wake it in turn:
 * the polling thread reads the sockets and progresses the transports itself, as a UCX application
 * calls its worker's progress. On a host with few cores it also stops the polling thread and the
 * transports' threads from taking turns on the same cores.
 *
 * <p>Only the thread that took it may call {@link #progress} and {@link #close}, and it must call
 * {@link #progress} often: meanwhile nothing else runs the lent I/O, so answers, a peer's
 * operations, keepalive probes and the endpoints' own writes to those connections wait for its next
 * call. Between calls it may spin or yield, not block: a thread found blocked or parked (on a lock,
 * a future, a sleep) for 10 ms or more, or ended, loses the I/O to the transports' own threads with
 * a warning, since it may be waiting for what only that I/O brings. Never take it on an actor's
 * thread. A worker that closes meanwhile ends it. Once it has ended, {@link #progress} does nothing.
 */
public interface CallerProgress extends AutoCloseable {
    /**
     * Runs the I/O that is ready now and the transports' tasks that are due; never waits.
     *
     * @return how many events and tasks it handled (0: nothing was ready, or it has ended)
     * @throws IllegalStateException if called from another thread than the one that took it
     */
    int progress();

    /**
     * Gives the I/O back to the transports' own threads. Closing it again does nothing.
     *
     * @throws IllegalStateException if called from another thread than the one that took it
     */
    @Override
    void close();
}
