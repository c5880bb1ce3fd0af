package dev.fenceline.actor;

import com.typesafe.config.Config;
import dev.fenceline.ActiveMessageHandler;
import dev.fenceline.ConfigurationException;
import dev.fenceline.Endpoint;
import dev.fenceline.EndpointClosedException;
import dev.fenceline.FencelineException;
import dev.fenceline.MemoryRegion;
import dev.fenceline.RemoteKey;
import dev.fenceline.Worker;
import dev.fenceline.WorkerAddress;
import dev.fenceline.WorkerStatistics;
import dev.fenceline.actor.EndpointCounters.Counter;
import dev.fenceline.internal.FencelineSettings;
import dev.fenceline.internal.RegionTransports;
import dev.fenceline.internal.RegistrationTable;
import dev.fenceline.spi.RegionHandle;
import dev.fenceline.spi.SharedMemory;
import dev.fenceline.spi.Transport;
import dev.fenceline.spi.TransportContext;
import dev.fenceline.spi.TransportProvider;
import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import org.apache.pekko.Done;
import org.apache.pekko.actor.typed.ActorRef;
import org.apache.pekko.actor.typed.ActorSystem;
import org.apache.pekko.actor.typed.javadsl.AskPattern;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/** The user's handle on a worker. Created by {@link dev.fenceline.Fenceline#newWorker(String)}. */
public final class WorkerImpl implements Worker {
    private static final Logger LOG = LoggerFactory.getLogger(WorkerImpl.class);
    private static final AtomicLong WORKERS = new AtomicLong();

    private final String name;
    private final ActorSystem<?> system;
    private final FencelineSettings settings;
    private final RegistrationTable registrations;
    private final dev.fenceline.spi.support.ExactlyOnceWindows windows;
    private final WorkerAddress address;
    private final AtomicLong epoch = new AtomicLong();
    private final ActorRef<WorkerActor.Command> actor;
    /**
     * The open endpoints; a closed one is forgotten. A concurrent set: a list copied at every
     * connect and close made connecting and closing tens of thousands of endpoints quadratic.
     */
    private final Set<EndpointImpl> endpoints = ConcurrentHashMap.newKeySet();
    /**
     * What every endpoint the worker made has counted, kept as they count (closed ones' too), so that
     * statistics cost a row per counting thread, not a visit to each endpoint.
     */
    private final WorkerCounts counts = WorkerCounts.create();
    private final AtomicLong endpointCount = new AtomicLong();
    private final AtomicBoolean closing = new AtomicBoolean();
    private final CompletableFuture<Void> closed = new CompletableFuture<>();
    private final AtomicBoolean released = new AtomicBoolean();
    private final Duration askTimeout;
    private final List<Transport> transportList;
    /** The transports' progress agents, once the worker actor started them. */
    private final CompletableFuture<dev.fenceline.spi.support.ProgressRunners> agents = new CompletableFuture<>();
    private final LaneEventDispatch laneEvents;
    /**
     * Set after construction, taken once to unregister: the worker may be released meanwhile on
     * another thread, and a bean unregistered twice could take another worker's of the same name.
     */
    private final java.util.concurrent.atomic.AtomicReference<WorkerMBean> jmx = new java.util.concurrent.atomic.AtomicReference<>();
    /** Connects whose endpoint is not there yet: a close fails them (the actors that would answer stop). */
    private final java.util.Set<CompletableFuture<EndpointProtocol.ConnectResult>> connecting =
            java.util.concurrent.ConcurrentHashMap.newKeySet();

    private WorkerImpl(String name, ActorSystem<?> system, FencelineSettings settings, Config config,
            Map<String, TransportProvider> providers) {
        this.name = name;
        this.system = system;
        this.settings = settings;
        UUID id = UUID.randomUUID();
        this.registrations = new RegistrationTable(id, name);
        Map<String, Transport> transports = new LinkedHashMap<>();
        Map<String, byte[]> addresses = new LinkedHashMap<>();
        this.windows = settings.exactlyOnce().newWindows(name, SystemClock.of(system));
        try {
            for (String t : settings.transports()) {
                TransportProvider p = providers.get(t);
                String section = "fenceline.transport." + t;
                Config tc = config.hasPath(section) ? config.getConfig(section)
                        : com.typesafe.config.ConfigFactory.empty();
                Transport transport = p.create(new TransportContext(id, name, tc, registrations, windows,
                        settings.keepaliveInterval().isZero() ? java.time.Duration.ZERO : settings.keepaliveTimeout()));
                transports.put(t, transport);
                addresses.put(t, transport.localAddress());
            }
            this.address = new WorkerAddress(id, name, addresses); // refuses what its bytes cannot carry
        } catch (RuntimeException | Error e) { // an Error too (a native library that fails to link): none stays open
            undoStart(transports.values(), e);
            throw e;
        }
        this.transportList = List.copyOf(transports.values());
        registrations.transports(new RegionTransports() {
            @Override
            public Shared allocateShared(long bytes) {
                for (Transport t : transportList) {
                    SharedMemory m = t.allocateShared(bytes);
                    if (m != null) {
                        return new Shared(t.name(), m);
                    }
                }
                return null;
            }

            @Override
            public Map<String, RegionHandle> register(ByteBuffer memory, String except) {
                Map<String, RegionHandle> handles = new LinkedHashMap<>();
                try {
                    for (Transport t : transportList) {
                        if (!t.name().equals(except)) {
                            RegionHandle h = t.registerRegion(memory);
                            if (h != null) {
                                handles.put(t.name(), h);
                            }
                        }
                    }
                } catch (RuntimeException e) {
                    handles.values().forEach(RegionHandle::close);
                    throw e;
                }
                return handles;
            }
        });
        this.askTimeout = settings.connectTimeout().plus(Duration.ofSeconds(5));
        this.laneEvents = new LaneEventDispatch(system.executionContext());
        try {
            this.actor = system.systemActorOf(WorkerActor.create(settings, name, transports, epoch, laneEvents,
                    counts, this::stopped, registrations, agents::complete),
                    "fenceline-worker-" + WORKERS.incrementAndGet(), WorkerActor.props(settings));
        } catch (RuntimeException | Error e) { // the actor system is terminating
            undoStart(transports.values(), e);
            throw e;
        }
        // Last: the process's handler watchdog keeps what it watches until the worker closes.
        registrations.handlerTimeBound(settings.handlerTimeBound());
    }

    /**
     * A start failed: closes the transports it had opened, each whatever the others do (what a close
     * throws is kept on the start's own failure), and lets the worker's regions and its handlers'
     * watch go.
     */
    private void undoStart(java.util.Collection<Transport> started, Throwable failure) {
        for (Transport t : started) {
            try {
                t.close();
            } catch (Throwable e) { // an Error too (the same library failing again): the next is closed all the same
                if (e != failure) { // a preallocated Error thrown again cannot suppress itself
                    failure.addSuppressed(e);
                }
            }
        }
        registrations.closeAll();
    }

    /**
     * @param name the worker's name
     * @param system the actor system that hosts it
     * @param settings validated settings
     * @param config the whole configuration, for the transports' sections
     * @param providers the enabled transports' providers, by name
     * @return the worker
     */
    public static CompletionStage<Worker> start(String name, ActorSystem<?> system, FencelineSettings settings,
            Config config, Map<String, TransportProvider> providers) {
        if (name == null || name.isBlank()) {
            return CompletableFuture.failedFuture(new ConfigurationException("a worker needs a non-blank name"));
        }
        int nameBytes = name.getBytes(java.nio.charset.StandardCharsets.UTF_8).length;
        if (nameBytes > dev.fenceline.WorkerAddress.MAX_NAME_BYTES) { // its address would reach no peer
            return CompletableFuture.failedFuture(new ConfigurationException("a worker name has at most "
                    + dev.fenceline.WorkerAddress.MAX_NAME_BYTES + " UTF-8 bytes, not " + nameBytes));
        }
        try {
            WorkerImpl w = new WorkerImpl(name, system, settings, config, providers);
            if (settings.jmx()) {
                w.jmx.set(WorkerMBean.register(w));
                if (w.released.get()) { // released meanwhile, maybe before the bean was set
                    w.unregisterBean();
                }
            }
            return CompletableFuture.completedFuture(w);
        } catch (FencelineException e) {
            return CompletableFuture.failedFuture(e);
        } catch (RuntimeException e) {
            return CompletableFuture.failedFuture(new FencelineException("worker '" + name + "' could not start: " + e, e));
        }
    }

    @Override
    public String name() {
        return name;
    }

    @Override
    public WorkerAddress address() {
        return address;
    }

    @Override
    public CompletionStage<Endpoint> connect(WorkerAddress peer) {
        if (closing.get()) {
            return CompletableFuture.failedFuture(new EndpointClosedException("worker '" + name + "' is closed"));
        }
        CompletableFuture<EndpointProtocol.ConnectResult> reply = AskPattern.<WorkerActor.Command,
                EndpointProtocol.ConnectResult>ask(actor, replyTo -> new WorkerActor.Connect(peer, replyTo), askTimeout,
                system.scheduler()).toCompletableFuture();
        // The ask's stage (Scala's converter) would run dependent stages on the common pool; the
        // actor system's dispatcher runs them instead (the endpoint actor completes the reply, and
        // the user's continuation must not run inside it).
        CompletableFuture<EndpointProtocol.ConnectResult> relayed = new CompletableFuture<>();
        reply.whenCompleteAsync((r, e) -> {
            if (e != null) {
                relayed.completeExceptionally(e);
            } else if (!relayed.complete(r) && r.endpoint() != null) {
                r.endpoint().close(); // the worker's close failed the connect first: nobody gets this endpoint
            }
        }, system.executionContext()).exceptionally(rejected -> { // a dispatcher shut down meanwhile
            relayed.completeExceptionally(rejected);
            return null;
        });
        // A close meanwhile stops the actors that would answer: it fails the connect itself.
        connecting.add(relayed);
        relayed.whenComplete((r, e) -> connecting.remove(relayed));
        if (closing.get()) {
            relayed.completeExceptionally(closedWhileConnecting(peer));
        }
        return relayed
                .thenCompose(r -> {
                    if (r.error() != null) {
                        return CompletableFuture.failedFuture(r.error());
                    }
                    EndpointImpl e = (EndpointImpl) r.endpoint();
                    e.onClosed(() -> forget(e)); // before it is listed: a close from now on forgets it
                    endpoints.add(e);
                    endpointCount.incrementAndGet();
                    if (closing.get()) { // the close may have listed the endpoints before this one
                        e.close();
                        return CompletableFuture.failedFuture(closedWhileConnecting(peer));
                    }
                    return CompletableFuture.completedFuture(r.endpoint());
                });
    }

    private EndpointClosedException closedWhileConnecting(WorkerAddress peer) {
        return new EndpointClosedException("worker '" + name + "' closed while connecting to " + peer.name());
    }

    /** Fails the connects under way (once closing is set). */
    private void failConnecting() {
        for (CompletableFuture<EndpointProtocol.ConnectResult> f : connecting) {
            f.completeExceptionally(new EndpointClosedException("worker '" + name + "' closed while connecting"));
        }
    }

    @Override
    public List<Endpoint> endpoints() {
        return List.copyOf(endpoints);
    }

    @Override
    public MemoryRegion register(ByteBuffer direct) {
        return registrations.register(direct);
    }

    @Override
    public MemoryRegion register(ByteBuffer direct, java.util.Set<dev.fenceline.Access> access) {
        return registrations.register(direct, access);
    }

    @Override
    public MemoryRegion allocate(long bytes) {
        return registrations.allocate(bytes);
    }

    @Override
    public MemoryRegion allocate(long bytes, java.util.Set<dev.fenceline.Access> access) {
        return registrations.allocate(bytes, access);
    }

    @Override
    public RemoteKey unpackRemoteKey(byte[] packed) {
        if (closing.get()) { // its transports are closed: none can take the key
            throw new EndpointClosedException("worker '" + name + "' is closed");
        }
        RemoteKey key = RemoteKey.fromBytes(packed);
        for (Transport t : transportList) {
            t.keyUnpacked(key);
        }
        return key;
    }

    @Override
    public void fence() {
        epoch.incrementAndGet();
    }

    /**
     * Flushes every endpoint. Each endpoint flush is queued from the calling thread, behind that
     * thread's earlier operations, which a detour through the worker actor would not guarantee.
     */
    @Override
    public CompletionStage<Void> flush() {
        CompletableFuture<?>[] all = endpoints.stream().filter(e -> !e.channel().isClosing())
                .map(e -> e.flush().toCompletableFuture()).toArray(CompletableFuture[]::new);
        return CompletableFuture.allOf(all);
    }

    @Override
    public void setActiveMessageHandler(int id, ActiveMessageHandler handler) {
        registrations.setHandler(id, handler);
    }

    @Override
    public void refusePeer(UUID peerWorkerId, String reason) {
        java.util.Objects.requireNonNull(peerWorkerId, "peerWorkerId");
        java.util.Objects.requireNonNull(reason, "reason");
        if (windows.refuse(peerWorkerId, reason)) {
            LOG.info("worker {}: refusing worker {} from now on: {}", name, peerWorkerId, reason);
        }
    }

    /** @return the progress agents, once the worker actor started them (at once, but for a worker just made) */
    private dev.fenceline.spi.support.ProgressRunners runningAgents() {
        try {
            return agents.get(askTimeout.toMillis(), java.util.concurrent.TimeUnit.MILLISECONDS);
        } catch (java.util.concurrent.TimeoutException e) {
            throw new IllegalStateException("worker " + name + " did not start its transports' progress agents within "
                    + askTimeout, e);
        } catch (java.util.concurrent.ExecutionException e) {
            throw new IllegalStateException("worker " + name + ": its progress agents did not start", e.getCause());
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted while worker " + name + " started its progress agents", e);
        }
    }

    @Override
    public dev.fenceline.CallerProgress progressHere() {
        if (closing.get()) {
            throw new IllegalStateException("worker " + name + " is closed");
        }
        List<dev.fenceline.CallerProgress> loans = new java.util.ArrayList<>();
        try {
            for (Transport t : transportList) {
                dev.fenceline.CallerProgress p = t.progressHere();
                if (p != null) {
                    loans.add(p);
                }
            }
            dev.fenceline.CallerProgress p = runningAgents().lend(() -> {
                for (dev.fenceline.CallerProgress taken : loans) { // tcp's loops keep being served meanwhile
                    taken.progress();
                }
            });
            if (p != null) {
                loans.add(p);
            }
        } catch (RuntimeException e) {
            try {
                dev.fenceline.spi.support.CombinedProgress.of(loans).close();
            } catch (RuntimeException again) {
                e.addSuppressed(again);
            }
            throw e;
        }
        return dev.fenceline.spi.support.CombinedProgress.of(loans);
    }

    @Override
    public WorkerStatistics statistics() {
        Totals t = Totals.of(counts); // a row per thread: no endpoint is visited
        int open = endpoints.size();
        return new WorkerStatistics(endpointCount.get(), t.operations(), t.completed(), t.failed(), t.flushes(),
                t.get(Counter.STRONG_FENCES), t.get(Counter.WEAK_FENCES), t.get(Counter.FAST_FORWARDS),
                t.get(Counter.FENCE_QUEUED), t.get(Counter.MAX_FENCE_QUEUE_DEPTH), t.get(Counter.RECONFIGURATIONS),
                t.get(Counter.RESTARTS), t.outstanding(), t.fastPath(), open);
    }

    /** A closed endpoint is forgotten (its counts stay in the worker's running totals). */
    private void forget(EndpointImpl e) {
        e.forgotten();
        endpoints.remove(e);
    }

    @Override
    public AutoCloseable addLaneEventListener(dev.fenceline.LaneEventListener listener) {
        return laneEvents.add(java.util.Objects.requireNonNull(listener, "listener"));
    }

    @Override
    public CompletionStage<Void> close() {
        if (closing.compareAndSet(false, true)) {
            failConnecting();
            // Nobody else sees these closes: a failure one reports (an implicit operation's) is logged.
            CompletableFuture<?>[] eps = endpoints.stream().map(e -> e.close().toCompletableFuture()
                    .whenComplete((v, failed) -> {
                        if (failed != null) {
                            LOG.warn("worker {}: endpoint {} closed with the worker after a failure: {}", name,
                                    e.channel().name(), failed.toString());
                        }
                    }))
                    .toArray(CompletableFuture[]::new);
            CompletableFuture.allOf(eps)
                    .handle((v, e) -> AskPattern.<WorkerActor.Command, Done>ask(actor, WorkerActor.Close::new,
                            askTimeout, system.scheduler()))
                    .thenCompose(s -> s)
                    .whenComplete((d, e) -> release());
        }
        return closed;
    }

    /**
     * The worker actor stopped: after {@link #close()}, or because the actor system terminated
     * without one (its transports are closed then too); then nothing of the worker stays behind.
     */
    private void stopped() {
        closing.set(true);
        agents.completeExceptionally(new IllegalStateException("worker " + name + " stopped")); // if never started
        failConnecting();
        release();
    }

    /** Once, whichever way the worker ends first. */
    private void release() {
        if (!released.compareAndSet(false, true)) {
            return;
        }
        try {
            registrations.closeAll();
            unregisterBean();
        } finally { // whatever JMX says, the worker is closed
            closed.complete(null);
        }
    }

    /** Unregisters the JMX bean, if this is the first to take it. */
    private void unregisterBean() {
        WorkerMBean bean = jmx.getAndSet(null);
        if (bean != null) {
            bean.unregister();
        }
    }

    @Override
    public CompletionStage<Void> whenClosed() {
        return closed.minimalCompletionStage();
    }

    @Override
    public String toString() {
        return "Worker[" + name + "]";
    }
}
