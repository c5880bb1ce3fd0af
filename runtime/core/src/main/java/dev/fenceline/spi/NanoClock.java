package dev.fenceline.spi;

import java.util.function.LongSupplier;
import org.apache.pekko.actor.typed.ActorSystem;
import org.apache.pekko.actor.typed.javadsl.Adapter;

/**
 * A clock kept by an actor system's scheduler. A scheduler that keeps its own time (the test
 * kit's deterministic simulation runs on virtual time) implements this, and the runtime's
 * actors then read that time instead of {@link System#nanoTime()}, so that a timeout means the
 * same under the simulation as it does for real.
 */
public interface NanoClock {
    /** @return the current time in nanoseconds, on an arbitrary origin (like {@link System#nanoTime()}) */
    long nanoTime();

    /**
     * @param system an actor system
     * @return its scheduler's clock, or {@link System#nanoTime()} when the scheduler keeps real time
     */
    static LongSupplier of(ActorSystem<?> system) {
        org.apache.pekko.actor.Scheduler scheduler;
        try {
            scheduler = Adapter.toClassic(system).scheduler();
        } catch (UnsupportedOperationException e) {
            return System::nanoTime; // a stub system (BehaviorTestKit) has no classic side, and real time
        }
        return scheduler instanceof NanoClock c ? c::nanoTime : System::nanoTime;
    }
}
