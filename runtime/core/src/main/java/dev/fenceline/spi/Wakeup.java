package dev.fenceline.spi;

/**
 * How an idle progress agent sleeps until its backend has work, for a backend with an event to
 * wait on (UCT's iface event fd, an eventfd): instead of parking for a guessed time, the agent's
 * thread waits in {@link #await} and wakes on the event itself.
 *
 * <p>The runtime calls {@link #await} on the agent's thread only, after the agent has been idle
 * for a while (it spins as {@link #spinsBeforeWait} says, then yields). {@link #wake} may be called from any thread: the
 * transport calls it when it hands the agent work from elsewhere (an operation posted from an
 * endpoint actor), since that work raises no backend event.
 */
public interface Wakeup {
    /**
     * Waits until the backend has an event, {@link #wake} is called, or the time passes; returns at
     * once if an event is already pending (UCT's arm says busy). Must not lose a wake that came
     * before the call.
     *
     * @param timeoutNanos the longest wait
     */
    void await(long timeoutNanos);

    /** Ends a current or the next {@link #await}; any thread. */
    void wake();

    /**
     * How many idle passes the agent spins (polls without giving up its core) before it yields and
     * then waits. Spinning answers soonest, and pays where a pass is cheap (polling memory); where
     * each pass is a system call, a spinning agent takes a core from the threads that answer its
     * completions, and yielding is better.
     *
     * @return idle passes to spin, 0 or more (default 0)
     */
    default int spinsBeforeWait() {
        return 0;
    }

    /**
     * Called once, before the agent's first pass, where the agent runs on a thread of its own that
     * idles through this wake-up: that thread then waits only in {@link #await}, which the agent
     * bounds itself, or, while a polling thread borrows the agent ({@code Worker.progressHere}), in
     * the borrower's passes; so the agent may keep deadlines of its own between passes (a thread
     * shared with other agents parks as its idle strategy says, whatever the agent holds). Default:
     * nothing.
     */
    default void ownThread() {
    }

    /**
     * The longest single wait, given the bound the runtime is configured with
     * ({@code fenceline.progress.idle-park-max}): that bound keeps the cost of a missed event small.
     * A backend that is told of every piece of work for its agent, so that no event is missed, may
     * wait longer, and an idle agent then wakes less often for nothing.
     *
     * @param configured the runtime's bound, positive
     * @return the bound for this wake-up, positive (default: the runtime's)
     */
    default long maxWaitNanos(long configured) {
        return configured;
    }
}
