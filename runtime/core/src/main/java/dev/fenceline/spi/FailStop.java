package dev.fenceline.spi;

/**
 * A progress agent that can stop for good when its loop throws an {@link Error}: the runtime then
 * calls {@link #failStop} once, on the agent's thread, and never runs the agent's {@code doWork}
 * again. An {@code Error} there (a fault in mapped memory a peer shrank, which the JVM delivers
 * asynchronously, anywhere in the loop; memory exhausted; a native library's failure) leaves the
 * agent's state unknown, and an agent that simply ended would leave its lanes waiting for answers
 * that cannot come: the transport fails them instead, typed, so that endpoints fail over, and
 * refuses what comes after. An agent that is not one is only stopped.
 *
 * <p>It may be called from the runner's error handler or as the thread ends (then the agent's
 * {@code onClose} follows on the same thread); on a thread that several agents share, for an
 * {@code Error} that another agent's loop let through (the thread ends with all of them); never
 * for one its {@code onClose} throws. Its {@link Wakeup} may still be called after it.
 */
public interface FailStop {
    /**
     * The agent's loop threw; its transport stops: the lanes that need the agent fail with a typed
     * error naming the cause, and new connects are refused. Must not throw.
     *
     * @param cause what the loop threw
     */
    void failStop(Error cause);
}
