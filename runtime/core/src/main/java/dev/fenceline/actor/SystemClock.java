package dev.fenceline.actor;

import dev.fenceline.spi.NanoClock;
import java.util.function.LongSupplier;
import org.apache.pekko.actor.typed.ActorSystem;
import org.apache.pekko.actor.typed.javadsl.Adapter;

/** The time the runtime's actors read: their scheduler's, if it keeps its own ({@link NanoClock}). */
final class SystemClock {
    private SystemClock() {
    }

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
