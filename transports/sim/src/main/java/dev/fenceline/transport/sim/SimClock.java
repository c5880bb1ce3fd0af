package dev.fenceline.transport.sim;

import java.util.concurrent.atomic.AtomicReference;

/**
 * Virtual time for the sim transport: a deterministic simulation (the test kit's) installs one
 * while it runs, and sim transports configured with {@code deterministic = on} deliver on it, on
 * the simulation's single thread, instead of on a delivery thread of their own on real time.
 */
public interface SimClock {
    /** @return the current time in nanoseconds, on an arbitrary origin */
    long nanoTime();

    /**
     * @param dueNanos when to run, in {@link #nanoTime()} terms (the past means now)
     * @param action what to run
     */
    void schedule(long dueNanos, Runnable action);

    /**
     * @param clock the simulation's clock, from now until {@link #uninstall}
     * @throws IllegalStateException if another is installed
     */
    static void install(SimClock clock) {
        if (!Installed.CURRENT.compareAndSet(null, clock)) {
            throw new IllegalStateException("a deterministic simulation's clock is installed already");
        }
    }

    /** @param clock the clock that {@link #install} installed; another one stays */
    static void uninstall(SimClock clock) {
        Installed.CURRENT.compareAndSet(clock, null);
    }

    /**
     * @param what who needs it, for the message
     * @return the installed clock
     * @throws IllegalStateException if none is installed
     */
    static SimClock require(String what) {
        SimClock c = Installed.CURRENT.get();
        if (c == null) {
            throw new IllegalStateException(what + " runs only inside a deterministic simulation (start one with"
                    + " the test kit's DeterministicSimulation.start)");
        }
        return c;
    }

    /** The installed clock. */
    final class Installed {
        private static final AtomicReference<SimClock> CURRENT = new AtomicReference<>();

        private Installed() {
        }
    }
}
