package dev.fenceline.transport.tcp;

import dev.fenceline.EndpointFailedException;
import dev.fenceline.spi.LaneListener;
import dev.fenceline.spi.support.ReconnectPolicy;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.function.LongSupplier;
import org.apache.pekko.actor.typed.ActorRef;
import org.apache.pekko.actor.typed.Behavior;
import org.apache.pekko.actor.typed.javadsl.ActorContext;
import org.apache.pekko.actor.typed.javadsl.Behaviors;
import org.apache.pekko.actor.typed.javadsl.TimerScheduler;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The lifecycle of one {@link Rail}, one behavior per state: {@code connecting} (an attempt is
 * out, bounded by the connect timeout), {@code up} (a lane is in the endpoint's hands),
 * {@code backingOff} (waiting to try again) and {@code closing} (the endpoint let go while an
 * attempt was out; what it brings is closed). A rail stops for good when its endpoint closes the
 * lane, when the first connection cannot be made, when the peer refuses it, after
 * {@code reconnect.give-up-after}, or with the transport. The first connection is reported to the
 * transport actor, which answers the endpoint's connect; later ones reach the endpoint as a
 * recovered lane.
 */
final class RailActor {
    /** The logger of the rail's life; named after the rail, which is what a user configures. */
    private static final Logger LOG = LoggerFactory.getLogger(Rail.class);

    /** What a rail needs from its transport. */
    interface Connector {
        /**
         * Opens and authenticates one connection on {@code rail}. Completing the future
         * exceptionally abandons the attempt (its channel is closed).
         *
         * @param rail the path
         * @return the ready lane
         */
        CompletableFuture<TcpLane> open(Rail rail);

        /** @return whether the transport closed (a rail then stops instead of retrying) */
        boolean closed();

        /** @return the worker's name, for the log */
        String workerName();
    }

    /** A rail's message protocol. */
    sealed interface Command {
    }

    /**
     * An attempt brought a ready lane.
     *
     * @param attempt the attempt's number
     * @param lane the lane
     */
    record Opened(int attempt, TcpLane lane) implements Command {
    }

    /**
     * An attempt failed.
     *
     * @param attempt the attempt's number
     * @param cause why
     */
    record OpenFailed(int attempt, Throwable cause) implements Command {
    }

    /**
     * The attempt under way took longer than the connect timeout.
     *
     * @param attempt the attempt's number
     */
    record AttemptTimedOut(int attempt) implements Command {
    }

    /** The backoff elapsed: try again. */
    enum Retry implements Command {
        /** The one instance. */
        INSTANCE
    }

    /**
     * {@code lane} died, or the endpoint gave up on it but still wants the rail.
     *
     * @param lane the lane
     * @param listener the endpoint's listener of that lane, told about the new connection
     * @param cause why
     */
    record Lost(TcpLane lane, LaneListener listener, Throwable cause) implements Command {
    }

    /**
     * The endpoint closed {@code lane}: it wants nothing more from the rail.
     *
     * @param lane the lane
     */
    record Stop(TcpLane lane) implements Command {
    }

    /**
     * Asks which state the rail is in (diagnostics, and tests that must know a message was
     * handled before time moves on).
     *
     * @param replyTo gets {@code connecting}, {@code up}, {@code backingOff} or {@code closing}
     */
    record Inspect(ActorRef<String> replyTo) implements Command {
    }

    /**
     * The first connection's outcome, for the transport actor.
     *
     * @param rail the rail
     * @param lane the lane, or null if it failed
     * @param cause why it failed, or null
     */
    record FirstOutcome(Rail rail, TcpLane lane, Throwable cause) {
    }

    /** The rail's timers: one attempt's deadline, and the wait before the next attempt. */
    private enum Timer {
        ATTEMPT, BACKOFF
    }

    private final ActorContext<Command> ctx;
    private final TimerScheduler<Command> timers;
    private final Rail rail;
    private final Connector connector;
    private final ReconnectPolicy policy;
    private final Duration connectTimeout;
    private final LongSupplier clock;
    private final LongSupplier random;
    private final java.util.function.Consumer<FirstOutcome> first;
    private int attempt;
    private CompletableFuture<TcpLane> pending;
    /** The lane last handed to the endpoint; events about older ones are stale. */
    private TcpLane current;
    private LaneListener listener;
    private long connectedAt;
    private ReconnectPolicy.Backoff backoff;

    private RailActor(ActorContext<Command> ctx, TimerScheduler<Command> timers, Rail rail, Connector connector,
            ReconnectPolicy policy, Duration connectTimeout, LongSupplier clock, LongSupplier random,
            java.util.function.Consumer<FirstOutcome> first) {
        this.ctx = ctx;
        this.timers = timers;
        this.rail = rail;
        this.connector = connector;
        this.policy = policy;
        this.connectTimeout = connectTimeout;
        this.clock = clock;
        this.random = random;
        this.first = first;
    }

    /**
     * @param rail the path
     * @param connector opens connections
     * @param policy the reconnect arithmetic
     * @param connectTimeout the bound on one attempt (connect plus handshake)
     * @param clock nanoseconds, for the give-up and stability clocks
     * @param random jitter
     * @param first told the first connection's outcome, on the rail's thread (it only sends a message)
     * @return a rail that starts its first attempt at once
     */
    static Behavior<Command> create(Rail rail, Connector connector, ReconnectPolicy policy, Duration connectTimeout,
            LongSupplier clock, LongSupplier random, java.util.function.Consumer<FirstOutcome> first) {
        return Behaviors.withTimers(timers -> Behaviors.setup(ctx -> {
            rail.drivenBy(ctx.getSelf());
            return new RailActor(ctx, timers, rail, connector, policy, connectTimeout, clock, random, first)
                    .attempt(true);
        }));
    }

    private Behavior<Command> attempt(boolean firstConnection) {
        int n = ++attempt;
        CompletableFuture<TcpLane> f = connector.open(rail);
        pending = f;
        timers.startSingleTimer(Timer.ATTEMPT, new AttemptTimedOut(n), connectTimeout);
        ctx.pipeToSelf(f, (lane, error) -> error == null ? new Opened(n, lane) : new OpenFailed(n, unwrap(error)));
        return connecting(firstConnection);
    }

    private Behavior<Command> connecting(boolean firstConnection) {
        return Behaviors.receive(Command.class)
                .onMessage(Opened.class, m -> m.attempt() == attempt, m -> opened(m.lane(), firstConnection))
                .onMessage(OpenFailed.class, m -> m.attempt() == attempt, m -> openFailed(m.cause(), firstConnection))
                .onMessage(AttemptTimedOut.class, m -> m.attempt() == attempt, m -> {
                    // The failure comes back through the attempt's own future.
                    pending.completeExceptionally(new EndpointFailedException("tcp: connect and handshake with "
                            + rail.remote() + " took longer than " + connectTimeout));
                    return Behaviors.same();
                })
                .onMessage(Stop.class, m -> m.lane() == current && current != null, m -> closing())
                .onMessage(Inspect.class, m -> inspect(m, "connecting"))
                .onAnyMessage(m -> Behaviors.same())
                .build();
    }

    private Behavior<Command> opened(TcpLane lane, boolean firstConnection) {
        timers.cancel(Timer.ATTEMPT);
        current = lane;
        connectedAt = clock.getAsLong();
        if (firstConnection) {
            first.accept(new FirstOutcome(rail, lane, null));
        } else {
            LOG.info("tcp {}: {} reconnected", connector.workerName(), rail);
            listener.onRecovered(lane);
        }
        return up();
    }

    private Behavior<Command> openFailed(Throwable cause, boolean firstConnection) {
        timers.cancel(Timer.ATTEMPT);
        if (firstConnection) {
            first.accept(new FirstOutcome(rail, null, cause));
            return Behaviors.stopped();
        }
        if (connector.closed()) {
            return Behaviors.stopped();
        }
        // Only a refusal known to be the peer's ends the rail at once; any other is one more failed
        // attempt, up to the give-up time: else one forged frame would end a rail for good.
        boolean refused = cause instanceof LaneHandler.RefusedException r && r.authenticated()
                || cause.getCause() instanceof LaneHandler.RefusedException c && c.authenticated();
        ReconnectPolicy.Backoff next = refused ? null : policy.failed(backoff, clock.getAsLong());
        if (next == null) {
            LOG.warn("tcp {}: {} stops reconnecting{}: {}", connector.workerName(), rail, refused
                    ? " (the peer refused us; retrying cannot help)" : " after " + policy.giveUpAfter(),
                    cause.toString());
            return Behaviors.stopped();
        }
        LOG.debug("tcp {}: {} reconnect failed: {}", connector.workerName(), rail, cause.toString());
        backoff = next;
        return backingOff();
    }

    private Behavior<Command> up() {
        return Behaviors.receive(Command.class)
                .onMessage(Lost.class, m -> m.lane() == current, this::onLost)
                .onMessage(Stop.class, m -> m.lane() == current, m -> Behaviors.stopped())
                .onMessage(Inspect.class, m -> inspect(m, "up"))
                .onAnyMessage(m -> Behaviors.same())
                .build();
    }

    private Behavior<Command> inspect(Inspect m, String state) {
        m.replyTo().tell(state);
        return Behaviors.same();
    }

    private Behavior<Command> onLost(Lost m) {
        if (connector.closed()) {
            return Behaviors.stopped();
        }
        listener = m.listener();
        backoff = policy.lost(backoff, clock.getAsLong(), connectedAt);
        LOG.info("tcp {}: {} lost: {}; reconnecting", connector.workerName(), rail, m.cause().toString());
        return backingOff();
    }

    private Behavior<Command> backingOff() {
        timers.startSingleTimer(Timer.BACKOFF, Retry.INSTANCE,
                Duration.ofNanos(ReconnectPolicy.jittered(backoff, random.getAsLong())));
        return Behaviors.receive(Command.class)
                .onMessage(Retry.class, m -> connector.closed() ? Behaviors.stopped() : attempt(false))
                .onMessage(Stop.class, m -> m.lane() == current, m -> Behaviors.stopped())
                .onMessage(Inspect.class, m -> inspect(m, "backingOff"))
                .onAnyMessage(m -> Behaviors.same())
                .build();
    }

    /** The endpoint let go while an attempt was out: wait for it and close what it brings. */
    private Behavior<Command> closing() {
        pending.completeExceptionally(new EndpointFailedException("tcp: the endpoint closed " + rail));
        return Behaviors.receive(Command.class)
                .onMessage(Opened.class, m -> m.attempt() == attempt, m -> {
                    m.lane().close();
                    return Behaviors.stopped();
                })
                .onMessage(OpenFailed.class, m -> m.attempt() == attempt, m -> Behaviors.stopped())
                .onMessage(Inspect.class, m -> inspect(m, "closing"))
                .onAnyMessage(m -> Behaviors.same())
                .build();
    }

    private static Throwable unwrap(Throwable e) {
        return e instanceof java.util.concurrent.CompletionException && e.getCause() != null ? e.getCause() : e;
    }
}
