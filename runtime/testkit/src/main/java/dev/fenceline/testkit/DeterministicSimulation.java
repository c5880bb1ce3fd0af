package dev.fenceline.testkit;

import com.typesafe.config.Config;
import com.typesafe.config.ConfigFactory;
import dev.fenceline.Fenceline;
import dev.fenceline.testkit.junit.FencelineExtension;
import dev.fenceline.testkit.world.World;
import java.time.Duration;
import java.util.Locale;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A whole Fenceline runtime on the {@code sim} transport, run deterministically: every actor, every
 * timer and every simulated delivery runs on the calling thread, one task at a time, in an order
 * chosen by a seed, on virtual time. The same seed and the same calls give the same run, step for
 * step, however busy the machine is; a different seed explores another interleaving.
 *
 * <pre>{@code
 * try (DeterministicSimulation sim = DeterministicSimulation.start(seed, ConfigFactory.empty())) {
 *     Worker a = sim.await(sim.fenceline().newWorker("a"));
 *     Worker b = sim.await(sim.fenceline().newWorker("b"));
 *     Endpoint ep = sim.await(a.connect(b.address()));
 *     sim.await(ep.put(buffer, address, key));   // runs the simulation until the put completes
 *     sim.advance(Duration.ofSeconds(5));         // five virtual seconds, in milliseconds of real time
 * }
 * }</pre>
 *
 * <p>Rules: call the runtime only from the thread that started the simulation, and wait only with
 * {@link #await} or {@link #advance} (a blocking {@code get()} would stop the world it waits for).
 * One simulation per JVM at a time. Virtual time only moves when nothing is ready to run, so
 * computation takes no simulated time.
 */
public final class DeterministicSimulation implements AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(DeterministicSimulation.class);
    /** How long (real time) the world may sit idle waiting for work from other threads. */
    private static final long IDLE_LIMIT = TimeUnit.SECONDS.toNanos(10);
    /** How much virtual time {@link #await(CompletionStage)} lets pass. */
    private static final Duration AWAIT_LIMIT = Duration.ofMinutes(10);

    private final World world;
    private final Fenceline fenceline;
    private final SimNetwork network;
    private final Thread owner = Thread.currentThread();

    private DeterministicSimulation(World world, Fenceline fenceline) {
        this.world = world;
        this.fenceline = fenceline;
        this.network = SimNetwork.of(fenceline);
    }

    /**
     * @param seed chooses the interleaving and seeds the sim's delays
     * @param config HOCON laid over the defaults (lanes, fence mode ...); the simulation sets the
     *     transport, the scheduler and the dispatchers itself
     * @return the running simulation, owned by the calling thread
     */
    public static DeterministicSimulation start(long seed, Config config) {
        World world = World.open(seed);
        try {
            String dispatcher = "{ type = Dispatcher, executor = \"" + dev.fenceline.testkit.world.WorldExecutorConfigurator.class
                    .getName() + "\", throughput = 1 }";
            Config sim = ConfigFactory.parseString(String.format(Locale.ROOT, """
                    fenceline.transports = [sim]
                    fenceline.transport.sim.seed = %d
                    fenceline.transport.sim.deterministic = on
                    pekko.scheduler.implementation = "%s"
                    pekko.actor.default-dispatcher = %s
                    pekko.actor.internal-dispatcher = %s
                    # Logging stays on real threads: it only prints, and its start-up waits for an answer.
                    pekko.loggers-dispatcher = "pekko.actor.default-blocking-io-dispatcher"
                    pekko.coordinated-shutdown.run-by-jvm-shutdown-hook = off
                    pekko.coordinated-shutdown.terminate-actor-system = on
                    """, seed, dev.fenceline.testkit.world.WorldScheduler.class.getName(), dispatcher, dispatcher));
            Config full = sim.withFallback(config).withFallback(ConfigFactory.load());
            Fenceline f = startRuntime(world, full);
            LOG.info("deterministic simulation, seed {}; rerun with {}={}", seed, FencelineExtension.SEED_ENV, seed);
            return new DeterministicSimulation(world, f);
        } catch (RuntimeException | Error e) {
            world.close();
            throw e;
        }
    }

    /**
     * Creating the actor system blocks until its logger answers, so another thread keeps the world
     * moving meanwhile; then the world settles and its schedule starts afresh from the seed.
     */
    private static Fenceline startRuntime(World world, Config config) {
        java.util.concurrent.atomic.AtomicBoolean starting = new java.util.concurrent.atomic.AtomicBoolean(true);
        Thread pumper = new Thread(() -> world.pumpReadyWhile(starting::get), "fenceline-sim-start-up");
        pumper.setDaemon(true);
        pumper.start();
        Fenceline f;
        try {
            f = Fenceline.create(config);
        } finally {
            starting.set(false);
            try {
                pumper.join();
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
        world.settleAndReseed();
        return f;
    }

    /**
     * @param fallback the seed to use when {@code FENCELINE_TEST_SEED} is not set
     * @return the seed from the environment, or {@code fallback}
     */
    public static long seedFromEnvironment(long fallback) {
        String env = System.getenv(FencelineExtension.SEED_ENV);
        if (env == null || env.isBlank()) {
            return fallback;
        }
        try {
            return Long.parseLong(env.trim());
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException(FencelineExtension.SEED_ENV + " = " + env + " is invalid: expected an"
                    + " integer", e);
        }
    }

    /** @return the runtime */
    public Fenceline fenceline() {
        return fenceline;
    }

    /** @return fault injection for its endpoints */
    public SimNetwork network() {
        return network;
    }

    /** @return the seed */
    public long seed() {
        return world.seed();
    }

    /** @return the environment setting that reruns this simulation, for failure messages */
    public String reproduce() {
        return FencelineExtension.SEED_ENV + "=" + world.seed();
    }

    /** @return virtual time since the start */
    public Duration elapsed() {
        return Duration.ofNanos(world.elapsedNanos());
    }

    /**
     * @return tasks other threads handed to the simulation since it started: each arrived at a
     *     moment the seed did not choose, so a run with any is not guaranteed to repeat
     */
    public long foreignTasks() {
        return world.foreignTasks();
    }

    /** @return tasks run so far: equal for equal seeds and calls */
    public long steps() {
        return world.steps();
    }

    private void checkOwner() {
        if (Thread.currentThread() != owner) {
            throw new IllegalStateException("the simulation is driven by " + owner.getName() + ", not "
                    + Thread.currentThread().getName());
        }
    }

    /**
     * Runs the simulation until {@code stage} completes, for at most ten minutes of virtual time.
     *
     * @param <T> its value's type
     * @param stage a stage the runtime completes
     * @return its value
     * @throws CompletionException with the stage's failure as cause (a {@code FencelineException}
     *     for the runtime's own)
     * @throws IllegalStateException if it is still not complete after ten virtual minutes or when
     *     nothing is left to run, or when called from inside a callback the simulation runs
     */
    public <T> T await(CompletionStage<T> stage) {
        return await(stage, AWAIT_LIMIT);
    }

    /**
     * Runs the simulation until {@code stage} completes.
     *
     * @param <T> its value's type
     * @param stage a stage the runtime completes
     * @param virtualLimit how much virtual time may pass first
     * @return its value
     * @throws CompletionException with the stage's failure as cause
     * @throws IllegalStateException if it is still not complete after {@code virtualLimit} or when
     *     nothing is left to run, or when called from inside a callback the simulation runs
     */
    public <T> T await(CompletionStage<T> stage, Duration virtualLimit) {
        checkOwner();
        CompletableFuture<T> f = stage.toCompletableFuture();
        world.pumpUntil(f::isDone, IDLE_LIMIT, virtualLimit.toNanos(), "the awaited stage (" + reproduce() + ")");
        try {
            return f.get();
        } catch (ExecutionException e) {
            throw new CompletionException(e.getCause());
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(e);
        }
    }

    /**
     * Lets {@code d} of virtual time pass, running everything that falls due.
     *
     * @param d how long
     */
    public void advance(Duration d) {
        checkOwner();
        world.runUntilVirtual(world.nanoTime() + d.toNanos());
    }

    /** Closes the runtime (flushing and closing its workers) on the simulation, then ends it. */
    @Override
    public void close() {
        checkOwner();
        try {
            world.ending();
            CompletableFuture<Void> done = fenceline.closeAsync().toCompletableFuture();
            world.pumpUntil(done::isDone, IDLE_LIMIT, AWAIT_LIMIT.toNanos(), "closing the runtime (" + reproduce()
                    + ")");
        } finally {
            world.close();
        }
    }
}
