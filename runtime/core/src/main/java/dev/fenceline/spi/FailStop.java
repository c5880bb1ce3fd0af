package dev.fenceline.spi;

/**
 * A progress agent that can stop for good when its loop throws an {@link Error}: the runtime then
 * calls {@link #failStop} once, on the agent's thread, and never runs the agent's {@code doWork}
 * again. An {@code Error} there (a fault in mapped memory a peer shrank, memory exhausted, a native
 * library's failure) leaves the agent's state unknown, and an agent that simply ended would leave
 * its lanes waiting for answers that cannot come: the transport fails them instead, typed, so that
 * endpoints fail over, and refuses what comes after. An agent that is not one is only stopped.
 */
public interface FailStop {
    /**
     * The agent's loop threw; its transport stops: every lane fails with a typed error naming the
     * cause, and new connects are refused. Must not throw.
     *
     * @param cause what the loop threw
     */
    void failStop(Error cause);
}
