package dev.fenceline;

import com.typesafe.config.Config;
import com.typesafe.config.ConfigFactory;
import dev.fenceline.actor.WorkerImpl;
import dev.fenceline.internal.FencelineSettings;
import dev.fenceline.spi.TransportProvider;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.ServiceLoader;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import org.apache.pekko.Done;
import org.apache.pekko.actor.CoordinatedShutdown;
import org.apache.pekko.actor.typed.ActorSystem;
import org.apache.pekko.actor.typed.Extension;
import org.apache.pekko.actor.typed.ExtensionId;
import org.apache.pekko.actor.typed.javadsl.Behaviors;

/**
 * The entry point. Either self-owned ({@link #create()}, {@link #create(Config)}: Fenceline starts and
 * stops its own actor system) or a Pekko extension on the user's system ({@link #get(ActorSystem)}:
 * workers are system actors, spawned with {@code systemActorOf}, never under the user's guardian).
 */
public final class Fenceline implements AutoCloseable, Extension {
    private static final Duration CLOSE_TIMEOUT = Duration.ofSeconds(30);

    private final ActorSystem<?> system;
    private final boolean ownsSystem;
    private final Config config;
    private final FencelineSettings settings;
    private final Map<String, TransportProvider> providers;
    private final List<Worker> workers = new CopyOnWriteArrayList<>();
    private final dev.fenceline.actor.StatPublisher stat;
    private volatile boolean closed;
    private CompletionStage<Void> closing;
    private CompletionStage<Void> workersClosed;

    private Fenceline(ActorSystem<?> system, boolean ownsSystem) {
        this.system = system;
        this.ownsSystem = ownsSystem;
        this.config = system.settings().config();
        ClassLoader loader = system.dynamicAccess().classLoader();
        Map<String, TransportProvider> found = findProviders(loader);
        Map<String, String> unavailable = unavailable(found);
        FencelineSettings configured = FencelineSettings.fromConfig(config);
        this.settings = configured.withoutUnavailable(unavailable).resolveTransports(found.keySet());
        for (String t : configured.transports()) {
            if (unavailable.containsKey(t)) {
                org.slf4j.LoggerFactory.getLogger(Fenceline.class).warn("fenceline.transports names {}, which cannot"
                        + " run in this process ({}); the others serve: {}", t, unavailable.get(t), settings.transports());
            }
        }
        if (!ownsSystem) { // create(Config) checked before it started the system
            dev.fenceline.internal.ConfigKeys.check(config, ConfigFactory.defaultReference(
                    system.dynamicAccess().classLoader()));
        }
        this.providers = chooseProviders(settings.transports(), found);
        this.stat = dev.fenceline.actor.StatPublisher.start(settings.stat(), () -> workers);
        if (stat != null) { // also when the user's system ends without closing this runtime
            system.getWhenTerminated().thenRun(stat::close);
        }
        if (settings.actors().coordinatedShutdown()) {
            joinCoordinatedShutdown();
        }
    }

    /**
     * Endpoints are flushed once the service stops taking requests, and workers closed when the
     * service stops; either task returns at once if {@link #close()} got there first. The tasks
     * wait for the workers only, never for the actor system's termination, which waits for them.
     * A member the cluster downed aborts its endpoints instead: the others have declared it gone
     * and taken over its work, so what it still holds must not reach them.
     */
    private void joinCoordinatedShutdown() {
        CoordinatedShutdown cs = CoordinatedShutdown.get(system);
        cs.addTask(CoordinatedShutdown.PhaseServiceRequestsDone(), "fenceline-flush-endpoints", () -> {
            if (cs.getShutdownReason().filter(r -> r == CoordinatedShutdown.clusterDowningReason()).isPresent()) {
                for (Worker w : workers) {
                    w.endpoints().forEach(e -> e.abort("this cluster member was downed: the others took it for"
                            + " gone, so what it had not sent is not sent"));
                }
                return CompletableFuture.completedFuture(Done.getInstance());
            }
            CompletableFuture<?>[] all = workers.stream().map(w -> w.flush().toCompletableFuture()
                    .exceptionally(e -> null)).toArray(CompletableFuture[]::new);
            return CompletableFuture.allOf(all).thenApply(v -> Done.getInstance());
        });
        cs.addTask(CoordinatedShutdown.PhaseServiceStop(), "fenceline-close-workers",
                () -> closeWorkers().thenApply(v -> Done.getInstance()));
    }

    /** @return the workers of this runtime that are open now (a closed one leaves the list) */
    public List<Worker> workers() {
        return List.copyOf(workers);
    }

    /**
     * Defaults for the actor system a runtime makes for itself, under the user's settings: its
     * scheduler ticks every 20 ms rather than Pekko's 10 (each tick wakes an idle process; the
     * runtime's timers are keepalive rounds, housekeeping and timeouts, none finer than that).
     */
    private static final String TICK = "pekko.scheduler.tick-duration";
    private static final Config OWN_SYSTEM = ConfigFactory.parseString(TICK + " = 20ms");

    /**
     * @param full the configuration with every library's defaults
     * @return it with the runtime's own defaults where it holds Pekko's (a value from a
     *     {@code reference.conf}); a value the user set stays
     */
    static Config ownSystemDefaults(Config full) {
        String resource = full.hasPath(TICK) ? full.getValue(TICK).origin().resource() : "reference.conf";
        return "reference.conf".equals(resource) ? OWN_SYSTEM.withFallback(full) : full;
    }

    /** @return a runtime configured from the class path ({@code application.conf} over {@code reference.conf}) */
    public static Fenceline create() {
        return create(ConfigFactory.load());
    }

    /**
     * @param config the configuration; {@code reference.conf} defaults apply to keys it does not set
     * @return a runtime with its own actor system
     * @throws ConfigurationException naming the first invalid key
     */
    public static Fenceline create(Config config) {
        Config full = ownSystemDefaults(config.withFallback(ConfigFactory.defaultReference()).resolve());
        FencelineSettings.fromConfig(full); // validate before starting anything
        dev.fenceline.internal.ConfigKeys.check(full, ConfigFactory.defaultReference());
        ActorSystem<Void> system = ActorSystem.create(Behaviors.empty(), "fenceline", full);
        try {
            return new Fenceline(system, true);
        } catch (RuntimeException e) {
            system.terminate();
            throw e;
        }
    }

    /**
     * @param system the user's actor system
     * @return the runtime bound to that system (one per system)
     */
    public static Fenceline get(ActorSystem<?> system) {
        return Id.INSTANCE.apply(system);
    }

    /**
     * @param name the worker's name, used in messages and addresses
     * @return the worker, once its transports are up; fails with {@link EndpointClosedException} if the
     *     runtime is closed or closes while the worker starts
     */
    public CompletionStage<Worker> newWorker(String name) {
        if (closed) {
            return CompletableFuture.failedFuture(new EndpointClosedException("this Fenceline runtime is closed"));
        }
        return WorkerImpl.start(name, system, settings, config, providers).thenApply(w -> {
            workers.add(w);
            ((WorkerImpl) w).whenClosed().thenRun(() -> workers.remove(w));
            if (closed) { // the runtime closed while the worker started: its close may not have seen it
                w.close();
                throw new EndpointClosedException("this Fenceline runtime closed while worker '" + name + "' started");
            }
            return w;
        });
    }

    /** @return this runtime's version, as built (for example {@code 0.1.0-SNAPSHOT}), or "unknown" */
    public static String version() {
        try (java.io.InputStream in = Fenceline.class.getResourceAsStream("version.properties")) {
            if (in != null) {
                java.util.Properties p = new java.util.Properties();
                p.load(in);
                return p.getProperty("version", "unknown");
            }
        } catch (java.io.IOException e) {
            // a jar that cannot be read is reported below as unknown
        }
        return "unknown";
    }

    /** @return the actor system this runtime runs on */
    public ActorSystem<?> system() {
        return system;
    }

    /** @return the enabled transports, in order of preference */
    public List<String> transports() {
        return settings.transports();
    }

    /** @return the resolved fence mode, lower-case ({@code weak}, {@code strong} or {@code endpoint}) */
    public String fenceMode() {
        return settings.fenceMode().name().toLowerCase(java.util.Locale.ROOT);
    }

    /**
     * Closes every worker (flushing their endpoints) and, if self-owned, terminates the actor
     * system. Waits at most a minute (30 seconds for the workers, the rest for the actor system);
     * {@link #closeAsync()} does not wait.
     */
    @Override
    public void close() {
        try {
            closeAsync().toCompletableFuture().get(2 * CLOSE_TIMEOUT.toMillis(), TimeUnit.MILLISECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        } catch (Exception e) {
            org.slf4j.LoggerFactory.getLogger(Fenceline.class).warn("closing: {}", e.toString());
        }
    }

    /**
     * Closes every worker (flushing their endpoints) and, if self-owned, terminates the actor
     * system, without blocking the caller. A worker that takes longer than 30 seconds is left
     * behind with a warning; the actor system's own termination is not bounded here
     * ({@link #close()} waits for all of it at most a minute).
     *
     * @return completes when done (never exceptionally); the same stage on every call
     */
    public CompletionStage<Void> closeAsync() {
        synchronized (this) {
            if (closing != null) {
                return closing;
            }
            closing = closeWorkers().thenCompose(v -> stat == null ? CompletableFuture.<Void>completedFuture(null)
                    : stat.close()).thenCompose(v -> {
                if (!ownsSystem) {
                    return CompletableFuture.<Void>completedFuture(null);
                }
                system.terminate();
                // Relayed through allOf: Scala's stage would run a dependent stage on the common pool.
                return CompletableFuture.allOf(system.getWhenTerminated().toCompletableFuture());
            });
            return closing;
        }
    }

    /** @return completes when every worker closed or the time limit passed (never exceptionally); the same stage on every call */
    private synchronized CompletionStage<Void> closeWorkers() {
        if (workersClosed != null) {
            return workersClosed;
        }
        closed = true;
        CompletableFuture<?>[] all = workers.stream().map(w -> {
            try {
                return w.close().toCompletableFuture();
            } catch (RuntimeException e) {
                return CompletableFuture.failedFuture(e);
            }
        }).toArray(CompletableFuture[]::new);
        // The time limit runs on the actor system's scheduler (virtual time in the test kit's
        // deterministic simulation), and everything after it on the thread that completes it.
        CompletableFuture<Void> late = new CompletableFuture<>();
        org.apache.pekko.actor.Cancellable timer;
        try {
            timer = system.scheduler().scheduleOnce(CLOSE_TIMEOUT, () -> late.completeExceptionally(
                    new java.util.concurrent.TimeoutException("workers did not close within " + CLOSE_TIMEOUT)),
                    system.executionContext());
        } catch (IllegalStateException schedulerStopped) { // the actor system is already terminating
            timer = null;
        }
        org.apache.pekko.actor.Cancellable t = timer;
        workersClosed = CompletableFuture.anyOf(CompletableFuture.allOf(all), late).handle((v, e) -> {
            if (t != null) {
                t.cancel();
            }
            if (e != null) {
                org.slf4j.LoggerFactory.getLogger(Fenceline.class).warn("closing workers: {}", e.toString());
            }
            return null;
        });
        return workersClosed;
    }

    private static Map<String, TransportProvider> findProviders(ClassLoader loader) {
        Map<String, TransportProvider> found = new LinkedHashMap<>();
        for (TransportProvider p : ServiceLoader.load(TransportProvider.class, loader)) {
            found.putIfAbsent(p.name(), p);
        }
        return found;
    }

    /**
     * Takes the transports that cannot run here out of {@code found}.
     *
     * @return why each cannot, by name
     */
    private static Map<String, String> unavailable(Map<String, TransportProvider> found) {
        Map<String, String> out = new LinkedHashMap<>();
        found.values().removeIf(p -> {
            String why = p.unavailabilityCause();
            if (why != null) {
                out.put(p.name(), why);
                org.slf4j.LoggerFactory.getLogger(Fenceline.class).debug("transport {} is not offered: {}", p.name(),
                        why);
            }
            return why != null;
        });
        return out;
    }

    private static Map<String, TransportProvider> chooseProviders(List<String> enabled,
            Map<String, TransportProvider> found) {
        Map<String, TransportProvider> chosen = new LinkedHashMap<>();
        List<String> missing = new ArrayList<>();
        for (String t : enabled) {
            TransportProvider p = found.get(t);
            if (p == null) {
                missing.add(t);
            } else {
                chosen.put(t, p);
            }
        }
        if (!missing.isEmpty()) {
            throw new ConfigurationException("fenceline.transports = " + enabled + " names " + missing
                    + ", but no transport provider of that name is on the class path (found: " + found.keySet() + ")");
        }
        return chosen;
    }

    /** The extension id: one {@link Fenceline} per actor system. */
    static final class Id extends ExtensionId<Fenceline> {
        static final Id INSTANCE = new Id();

        @Override
        public Fenceline createExtension(ActorSystem<?> system) {
            Fenceline f = new Fenceline(system, false);
            system.getWhenTerminated().thenRun(() -> f.closed = true);
            return f;
        }
    }
}
