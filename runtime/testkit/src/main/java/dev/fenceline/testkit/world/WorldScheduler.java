package dev.fenceline.testkit.world;

import com.typesafe.config.Config;
import dev.fenceline.spi.NanoClock;
import java.util.concurrent.ThreadFactory;
import org.apache.pekko.actor.Cancellable;
import org.apache.pekko.actor.Scheduler;
import org.apache.pekko.event.LoggingAdapter;
import scala.concurrent.ExecutionContext;
import scala.concurrent.duration.FiniteDuration;

/**
 * Pekko's scheduler on the {@link World}'s virtual time ({@code pekko.scheduler.implementation}):
 * a timer becomes a world task when the virtual clock reaches it. Also the runtime's clock
 * ({@link NanoClock}), so keepalive and timeouts count virtual time.
 */
public final class WorldScheduler implements Scheduler, NanoClock {
    private final World world;

    /**
     * The constructor Pekko calls.
     *
     * @param config the actor system's configuration
     * @param log its log
     * @param threadFactory unused: the world has no threads of its own
     */
    public WorldScheduler(Config config, LoggingAdapter log, ThreadFactory threadFactory) {
        this.world = World.require("WorldScheduler");
    }

    @Override
    public long nanoTime() {
        return world.nanoTime();
    }

    @Override
    public Cancellable scheduleOnce(FiniteDuration delay, Runnable runnable, ExecutionContext executor) {
        World.Timer t = world.at(world.nanoTime() + Math.max(0, delay.toNanos()), () -> executor.execute(runnable));
        return new Cancellable() {
            @Override
            public boolean cancel() {
                boolean was = t.cancelled;
                t.cancelled = true;
                return !was;
            }

            @Override
            public boolean isCancelled() {
                return t.cancelled;
            }
        };
    }

    /** Deprecated for callers, but still the fixed-rate primitive every Pekko scheduler provides. */
    @Override
    @SuppressWarnings("deprecation")
    public Cancellable schedule(FiniteDuration initialDelay, FiniteDuration interval, Runnable runnable,
            ExecutionContext executor) {
        long period = Math.max(1, interval.toNanos());
        Repeating r = new Repeating(runnable, executor, period);
        r.arm(world.nanoTime() + Math.max(0, initialDelay.toNanos()));
        return r;
    }

    /** A fixed-rate timer: re-armed one period after each due time until cancelled. */
    private final class Repeating implements Cancellable {
        private final Runnable runnable;
        private final ExecutionContext executor;
        private final long period;
        private volatile boolean cancelled;
        private volatile World.Timer current;

        Repeating(Runnable runnable, ExecutionContext executor, long period) {
            this.runnable = runnable;
            this.executor = executor;
            this.period = period;
        }

        void arm(long due) {
            current = world.at(due, () -> {
                if (!cancelled) {
                    executor.execute(runnable);
                    arm(due + period);
                }
            });
        }

        @Override
        public boolean cancel() {
            boolean was = cancelled;
            cancelled = true;
            World.Timer t = current;
            if (t != null) {
                t.cancelled = true;
            }
            return !was;
        }

        @Override
        public boolean isCancelled() {
            return cancelled;
        }
    }

    /** Virtual time has no tick: any frequency is fine. */
    @Override
    public double maxFrequency() {
        return 1_000_000.0;
    }
}
