package dev.fenceline.testkit.world;

import com.typesafe.config.Config;
import java.util.List;
import java.util.concurrent.AbstractExecutorService;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.TimeUnit;
import org.apache.pekko.dispatch.DispatcherPrerequisites;
import org.apache.pekko.dispatch.ExecutorServiceConfigurator;
import org.apache.pekko.dispatch.ExecutorServiceFactory;

/**
 * A dispatcher executor that hands every task to the {@link World} ({@code executor = } this
 * class's name in a dispatcher's configuration): actors then run one at a time, on the thread that
 * pumps the world, in an order its seed chooses.
 */
public final class WorldExecutorConfigurator extends ExecutorServiceConfigurator {
    private final World world;

    /**
     * The constructor Pekko calls.
     *
     * @param config the dispatcher's configuration
     * @param prerequisites what Pekko gives every dispatcher
     */
    public WorldExecutorConfigurator(Config config, DispatcherPrerequisites prerequisites) {
        super(config, prerequisites);
        this.world = World.require("WorldExecutorConfigurator");
    }

    @Override
    public ExecutorServiceFactory createExecutorServiceFactory(String id, ThreadFactory threadFactory) {
        return () -> new WorldExecutor(world);
    }

    /** The executor: no threads; shutting it down only refuses nothing (the world outlives it). */
    private static final class WorldExecutor extends AbstractExecutorService {
        private final World world;
        private volatile boolean shutdown;

        WorldExecutor(World world) {
            this.world = world;
        }

        @Override
        public void execute(Runnable command) {
            world.execute(command);
        }

        @Override
        public void shutdown() {
            shutdown = true;
        }

        @Override
        public List<Runnable> shutdownNow() {
            shutdown = true;
            return List.of();
        }

        @Override
        public boolean isShutdown() {
            return shutdown;
        }

        @Override
        public boolean isTerminated() {
            return shutdown;
        }

        @Override
        public boolean awaitTermination(long timeout, TimeUnit unit) {
            return true;
        }
    }
}
