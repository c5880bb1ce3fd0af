package dev.fenceline.actor;

import dev.fenceline.FencelineException;
import dev.fenceline.WorkerAddress;
import dev.fenceline.internal.FencelineSettings;
import dev.fenceline.spi.Transport;
import dev.fenceline.spi.TransportActors;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicLong;
import org.apache.pekko.Done;
import org.apache.pekko.actor.typed.ActorRef;
import org.apache.pekko.actor.typed.ActorSystem;
import org.apache.pekko.actor.typed.Behavior;
import org.apache.pekko.actor.typed.DispatcherSelector;
import org.apache.pekko.actor.typed.PostStop;
import org.apache.pekko.actor.typed.Props;
import org.apache.pekko.actor.typed.javadsl.ActorContext;
import org.apache.pekko.actor.typed.javadsl.Behaviors;
import org.apache.pekko.actor.typed.javadsl.TimerScheduler;

/**
 * A worker: owns its transports, whose control actors it spawns as children when it starts, and
 * spawns one {@link EndpointActor} child per connection; when it
 * stops, however (closed, or its actor system terminated without a close), its transports are
 * closed, so no socket or shared-memory segment outlives it. Memory
 * registrations and the fence epoch are published to callers through {@link WorkerImpl}, because
 * registering memory and fencing must not cost a message.
 */
public final class WorkerActor {

    /** The worker's message protocol. */
    public sealed interface Command {
    }

    /**
     * Connect to a peer.
     *
     * @param peer the peer's address
     * @param replyTo receives the endpoint once its lanes are connected, or the error
     */
    public record Connect(WorkerAddress peer, ActorRef<EndpointProtocol.ConnectResult> replyTo) implements Command {
    }

    /**
     * Close the transports and stop (endpoints are closed by the caller first).
     *
     * @param replyTo told when done
     */
    public record Close(ActorRef<Done> replyTo) implements Command {
    }

    /**
     * Timer: every endpoint's keepalive tick, from one timer per worker rather than one per endpoint
     * (with ten thousand endpoints, ten thousand timers firing at scattered moments woke the
     * scheduler, a dispatcher and the polling threads once each; one round wakes them once).
     */
    private enum KeepaliveRound implements Command {
        INSTANCE
    }

    /**
     * An endpoint actor stopped: it gets no more keepalive ticks.
     *
     * @param endpoint the endpoint actor
     */
    private record EndpointStopped(ActorRef<EndpointProtocol.Command> endpoint) implements Command {
    }

    private final ActorContext<Command> ctx;
    private final FencelineSettings settings;
    private final String name;
    private final Map<String, Transport> transports;
    private final AtomicLong epoch;
    private final ActorSystem<?> system;
    private final LaneEvents.Sink laneEvents;
    /** The worker's running totals: each endpoint's counts also go there. */
    private final WorkerCounts counts;
    private final Runnable stopped;
    private final Props endpointProps;
    /** How long an endpoint's close waits for its actor: one for all (an endpoint is kept small). */
    private final Duration closeTimeout;
    private int endpointCount;
    private final dev.fenceline.internal.LocalRegions localRegions;
    /** The transports' progress agents, running once the worker started. */
    private dev.fenceline.spi.support.ProgressRunners progress = dev.fenceline.spi.support.ProgressRunners.start(
            "none", List.of(), dev.fenceline.spi.support.ProgressRunners.Threading.DEDICATED, null);
    private boolean transportsClosed;
    private final TimerScheduler<Command> timers;
    /**
     * The endpoints that have not ended, in the order they were made (a deterministic round in
     * simulations); one that closed or failed leaves at the next round.
     */
    private final Map<ActorRef<EndpointProtocol.Command>, EndpointChannel> endpoints = new LinkedHashMap<>();
    /** The endpoints' clock (virtual in a deterministic simulation): their keepalive due times are on it. */
    private final java.util.function.LongSupplier clock;
    /** Told the progress agents once they run. */
    private final java.util.function.Consumer<dev.fenceline.spi.support.ProgressRunners> agentsStarted;

    private WorkerActor(ActorContext<Command> ctx, TimerScheduler<Command> timers, FencelineSettings settings,
            String name, Map<String, Transport> transports, AtomicLong epoch, LaneEvents.Sink laneEvents,
            WorkerCounts counts, Runnable stopped, dev.fenceline.internal.LocalRegions localRegions,
            java.util.function.Consumer<dev.fenceline.spi.support.ProgressRunners> agentsStarted) {
        this.agentsStarted = agentsStarted;
        this.timers = timers;
        this.localRegions = localRegions;
        this.ctx = ctx;
        this.stopped = stopped;
        this.endpointProps = props(settings);
        this.closeTimeout = settings.connectTimeout().plus(Duration.ofSeconds(5));
        this.settings = settings;
        this.name = name;
        this.transports = transports;
        this.epoch = epoch;
        this.system = ctx.getSystem();
        this.clock = SystemClock.of(system);
        this.laneEvents = laneEvents;
        this.counts = counts;
    }

    /**
     * @param settings the runtime settings
     * @param name the worker's name
     * @param transports the worker's transport instances, in order of preference
     * @param epoch the worker fence epoch, shared with the endpoint facades
     * @param laneEvents where its endpoints' lane events go
     * @param counts the worker's running totals, which its endpoints count into
     * @param stopped runs once the actor stopped and its transports are closed
     * @param localRegions the worker's registered memory, where endpoints find a local buffer's registration
     * @param agentsStarted told the transports' running progress agents, once (for
     *     {@link dev.fenceline.Worker#progressHere()}, which lends them)
     * @return the behavior
     */
    static Behavior<Command> create(FencelineSettings settings, String name, Map<String, Transport> transports,
            AtomicLong epoch, LaneEvents.Sink laneEvents, WorkerCounts counts, Runnable stopped,
            dev.fenceline.internal.LocalRegions localRegions,
            java.util.function.Consumer<dev.fenceline.spi.support.ProgressRunners> agentsStarted) {
        return Behaviors.setup(ctx -> Behaviors.withTimers(timers -> new WorkerActor(ctx, timers, settings, name,
                transports, epoch, laneEvents, counts, stopped, localRegions, agentsStarted).start()));
    }

    /**
     * @param settings the runtime settings
     * @return the props of the runtime's actors: on {@code fenceline.dispatcher} if one is set
     */
    static Props props(FencelineSettings settings) {
        String d = settings.actors().dispatcher();
        return d.isEmpty() ? Props.empty() : DispatcherSelector.fromConfig(d);
    }

    /**
     * A worker whose endpoints' lane events reach no listener (the runtime's own actor tests).
     *
     * @param settings the runtime settings
     * @param name the worker's name
     * @param transports the worker's transport instances, in order of preference
     * @param epoch the worker fence epoch, shared with the endpoint facades
     * @return the behavior
     */
    public static Behavior<Command> create(FencelineSettings settings, String name, Map<String, Transport> transports,
            AtomicLong epoch) {
        return create(settings, name, transports, epoch, LaneEvents.NONE, WorkerCounts.create(), () -> { },
                dev.fenceline.internal.LocalRegions.NONE, r -> { });
    }


    /** Spawns the transports' control actors as children, before any connect is handled. */
    private Behavior<Command> start() {
        for (Transport t : transports.values()) {
            try {
                t.start(new TransportActors() {
                    @Override
                    public <T> ActorRef<T> spawn(Behavior<T> behavior, String actorName) {
                        return ctx.spawn(behavior, "transport-" + t.name() + "-" + actorName, endpointProps);
                    }
                });
            } catch (RuntimeException e) {
                // Its connects then fail and say why; the worker's other transports still serve.
                ctx.getLog().error("worker {}: transport {} did not start: {}", name, t.name(), e.toString(), e);
            }
        }
        // Their polling loops, on threads of the runtime's own (never this dispatcher's), before any connect.
        List<dev.fenceline.spi.ProgressAgent> agents = new ArrayList<>();
        for (Transport t : transports.values()) {
            try {
                agents.addAll(t.progressAgents());
            } catch (RuntimeException e) {
                ctx.getLog().error("worker {}: transport {} gave no progress agents: {}", name, t.name(),
                        e.toString(), e);
            }
        }
        progress = dev.fenceline.spi.support.ProgressRunners.start(name, agents, settings.progress().threading(),
                settings.progress().newIdleStrategy(), settings.progress().parkMax().toNanos());
        agentsStarted.accept(progress);
        if (!settings.keepaliveInterval().isZero()) {
            timers.startTimerWithFixedDelay(KeepaliveRound.INSTANCE, settings.keepaliveInterval());
        }
        return running();
    }

    private Behavior<Command> running() {
        return Behaviors.receive(Command.class)
                .onMessage(Connect.class, this::onConnect)
                .onMessage(Close.class, this::onClose)
                .onMessageEquals(KeepaliveRound.INSTANCE, this::onKeepaliveRound)
                .onMessage(EndpointStopped.class, m -> {
                    endpoints.remove(m.endpoint());
                    return Behaviors.same();
                })
                .onSignal(PostStop.class, s -> {
                    closeTransports();
                    stopped.run();
                    return Behaviors.same();
                })
                .build();
    }

    private Behavior<Command> onKeepaliveRound() {
        long now = clock.getAsLong();
        for (var it = endpoints.entrySet().iterator(); it.hasNext();) {
            var e = it.next();
            EndpointChannel c = e.getValue();
            if (c.terminal() != null) {
                it.remove(); // closed or failed: no lane of it is kept alive any more
            } else if (c.keepaliveWanted() && now - c.keepaliveDue() >= 0) {
                // Else its transports watch every lane's peer, or it is quiet and nothing is due yet:
                // a message per endpoint per interval was most of an idle worker's CPU.
                e.getKey().tell(EndpointProtocol.KeepaliveTick.INSTANCE);
            }
        }
        return Behaviors.same();
    }

    private Behavior<Command> onConnect(Connect m) {
        WorkerAddress peer = m.peer();
        List<String> shared = new ArrayList<>();
        for (String t : settings.transports()) {
            if (transports.containsKey(t) && peer.transports().contains(t)
                    && (shared.isEmpty() || settings.lanesFromEveryTransport())) {
                shared.add(t);
            }
        }
        if (shared.isEmpty()) {
            m.replyTo().tell(new EndpointProtocol.ConnectResult(null, new FencelineException("worker '" + name
                    + "' shares no transport with " + peer + ": this worker offers " + transports.keySet())));
            return Behaviors.same();
        }
        int n = ++endpointCount;
        EndpointChannel channel = new EndpointChannel(name + "->" + peer.name() + "#" + n, peer, laneEvents, counts);
        channel.localRegions(localRegions);
        EndpointImpl facade = new EndpointImpl(channel, epoch, system, closeTimeout);
        List<String> over = List.copyOf(shared);
        org.slf4j.Logger log = ctx.getLog(); // the connect runs on the endpoint actor; the logger is thread-safe
        ActorRef<EndpointProtocol.Command> ref = ctx.spawn(EndpointActor.create(settings, channel, facade),
                "ep-" + n, endpointProps);
        // Before the connect is told: it may complete, and its caller close the endpoint (which asks
        // this actor ref), on another thread before this one runs its next statement.
        facade.actor(ref);
        ref.tell(new EndpointProtocol.Connect(() -> TransportConnects.connect(over, transports, peer, channel.name(),
                log), m.replyTo()));
        endpoints.put(ref, channel);
        ctx.watchWith(ref, new EndpointStopped(ref));
        ctx.getLog().debug("worker {}: connecting endpoint {} over {}", name, channel.name(), over);
        return Behaviors.same();
    }

    private Behavior<Command> onClose(Close m) {
        closeTransports();
        m.replyTo().tell(Done.getInstance());
        return Behaviors.stopped(); // stops the endpoint children too; the facade refuses new work
    }

    private void closeTransports() {
        if (transportsClosed) {
            return;
        }
        transportsClosed = true;
        progress.close(); // the polling loops stop before the transports they poll close
        for (Transport t : transports.values()) {
            try {
                t.close();
            } catch (RuntimeException e) {
                ctx.getLog().warn("worker {}: closing transport {} failed: {}", name, t.name(), e.toString());
            }
        }
    }
}
