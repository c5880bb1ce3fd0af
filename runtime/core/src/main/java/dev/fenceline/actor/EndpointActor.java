package dev.fenceline.actor;

import dev.fenceline.Endpoint;
import dev.fenceline.EndpointClosedException;
import dev.fenceline.EndpointFailedException;
import dev.fenceline.FencelineException;
import dev.fenceline.actor.EndpointProtocol.Abort;
import dev.fenceline.actor.EndpointProtocol.Close;
import dev.fenceline.actor.EndpointProtocol.Command;
import dev.fenceline.actor.EndpointProtocol.Connect;
import dev.fenceline.actor.EndpointProtocol.ConnectResult;
import dev.fenceline.actor.EndpointProtocol.Connected;
import dev.fenceline.actor.EndpointProtocol.DrainFenceQueue;
import dev.fenceline.actor.EndpointProtocol.DrainSubmissions;
import dev.fenceline.actor.EndpointProtocol.KeepaliveTick;
import dev.fenceline.actor.EndpointProtocol.ProbeLanes;
import dev.fenceline.actor.EndpointProtocol.ReplayDone;
import dev.fenceline.actor.EndpointProtocol.Retire;
import dev.fenceline.actor.EndpointProtocol.StrongFenceDone;
import dev.fenceline.actor.LaneProtocol.LaneAdded;
import dev.fenceline.actor.LaneProtocol.LaneFailed;
import dev.fenceline.actor.LaneProtocol.LaneFlushFailed;
import dev.fenceline.actor.LaneProtocol.LaneReady;
import dev.fenceline.actor.LaneProtocol.LaneRecovered;
import dev.fenceline.actor.LaneProtocol.LaneReplaced;
import dev.fenceline.internal.FencelineSettings;
import dev.fenceline.internal.Keepalive;
import dev.fenceline.spi.LaneConnection;
import java.util.List;
import java.util.function.LongSupplier;
import java.util.function.Supplier;
import org.apache.pekko.Done;
import org.apache.pekko.actor.typed.ActorRef;
import org.apache.pekko.actor.typed.Behavior;
import org.apache.pekko.actor.typed.PostStop;
import org.apache.pekko.actor.typed.javadsl.ActorContext;
import org.apache.pekko.actor.typed.javadsl.Behaviors;
import org.apache.pekko.actor.typed.javadsl.TimerScheduler;
import org.slf4j.Logger;

/**
 * One endpoint: its states and the routing of its messages. The work is in plain classes it owns:
 * {@link LaneSlots} (lanes, selection, parked work), {@link InflightTable} (requests, fragments,
 * sequence numbers), {@link FlushTracker}, {@link FenceAdmission}, {@link Keepalive},
 * {@link ReplayPlanner} and {@link GrantPolicy}. Nothing here blocks or calls into another
 * component's progress. States: {@link #connecting}, {@link #ready}, {@link #closed},
 * {@link #failed}.
 *
 * <p>User operations do not arrive one message each: the facade queues them on the
 * {@link EndpointChannel} and sends one {@link DrainSubmissions} per burst. The messages are
 * {@link EndpointProtocol}'s.
 */
public final class EndpointActor {
    private static final Logger LOG = org.slf4j.LoggerFactory.getLogger(EndpointActor.class);

    private final ActorContext<Command> ctx;
    /** The system scheduler's time: virtual under the test kit's deterministic simulation. */
    private final LongSupplier clock;
    private final TimerScheduler<Command> timers;
    private final Logger log;
    private final FencelineSettings settings;
    private final EndpointChannel channel;
    private final Endpoint facade;
    private final EndpointCounters counters;
    private final Keepalive keepalive;
    private final Operations ops;
    private final LaneChanges lanes;

    private EndpointActor(ActorContext<Command> ctx, TimerScheduler<Command> timers, FencelineSettings settings,
            EndpointChannel channel, Endpoint facade) {
        this.ctx = ctx;
        this.clock = SystemClock.of(ctx.getSystem());
        this.timers = timers;
        // A class logger, not the context's: that one keeps the actor's path and source strings for
        // the actor's life (about 150 bytes an endpoint); the messages name the endpoint themselves.
        this.log = LOG;
        this.settings = settings;
        this.channel = channel;
        this.facade = facade;
        this.counters = channel.counters();
        this.keepalive = new Keepalive(settings.keepaliveInterval().toNanos(),
                settings.keepaliveIdleInterval().toNanos(), settings.keepaliveTimeout().toNanos());
        ActorRef<Command> self = ctx.getSelf();
        this.ops = new Operations(settings, channel, log, keepalive, clock, () -> self.tell(StrongFenceDone.INSTANCE),
                () -> self.tell(DrainFenceQueue.INSTANCE));
        this.lanes = new LaneChanges(settings, channel, log, ops, keepalive, clock, this::bind,
                () -> self.tell(ReplayDone.INSTANCE));
        channel.submissions().wakeup(() -> self.tell(DrainSubmissions.INSTANCE));
    }

    /**
     * An endpoint that connects its lanes first.
     *
     * @param settings the runtime settings
     * @param channel shared with the facade
     * @param facade what the connect requester receives
     * @return the behavior; its first message is {@link Connect}
     */
    public static Behavior<Command> create(FencelineSettings settings, EndpointChannel channel, Endpoint facade) {
        return Behaviors.setup(ctx -> Behaviors.withTimers(timers ->
                new EndpointActor(ctx, timers, settings, channel, facade).starting()));
    }

    /**
     * An endpoint over lanes that are already connected (tests, and transports that connect
     * synchronously).
     *
     * @param settings the runtime settings
     * @param channel shared with the facade
     * @param facade the facade
     * @param connections the lanes
     * @return the behavior
     */
    public static Behavior<Command> createConnected(FencelineSettings settings, EndpointChannel channel,
            Endpoint facade, List<LaneConnection> connections) {
        return Behaviors.setup(ctx -> Behaviors.withTimers(timers -> {
            EndpointActor a = new EndpointActor(ctx, timers, settings, channel, facade);
            a.install(connections);
            return a.ready();
        }));
    }

    // ---------------------------------------------------------------- states

    private Behavior<Command> starting() {
        return Behaviors.receive(Command.class)
                .onMessage(Connect.class, m -> {
                    dev.fenceline.jfr.ConnectEvent event = channel.events().connecting();
                    ctx.pipeToSelf(LaneChanges.bounded(m.lanes().get(), settings.connectTimeout()), Connected::new);
                    return connecting(m.replyTo(), event);
                })
                .onMessage(DrainSubmissions.class, m -> Behaviors.same())
                .onMessage(Close.class, this::onCloseBeforeReady)
                .build();
    }

    private Behavior<Command> connecting(ActorRef<ConnectResult> replyTo, dev.fenceline.jfr.ConnectEvent event) {
        return Behaviors.receive(Command.class)
                .onMessage(Connected.class, m -> {
                    channel.events().connected(event, m.lanes() == null ? 0 : m.lanes().size(), m.error());
                    return onConnected(m, replyTo);
                })
                // Submissions wait in the channel until the lanes are there; no lane to keep alive yet.
                .onMessage(DrainSubmissions.class, m -> Behaviors.same())
                .onMessage(KeepaliveTick.class, m -> Behaviors.same())
                .onMessage(Close.class, this::onCloseBeforeReady)
                .build();
    }

    private Behavior<Command> onCloseBeforeReady(Close m) {
        retireLater();
        channel.markClosing();
        channel.terminate(closedError());
        rejectSubmissions(this::closedError);
        m.replyTo().tell(Done.getInstance());
        return closed();
    }

    /**
     * One function for the state's messages rather than a builder's cases: an endpoint keeps this
     * behavior for life, and a worker with ten thousand endpoints would hold ten thousand copies of
     * sixteen cases (about 500 bytes each endpoint).
     */
    private Behavior<Command> ready() {
        return Behaviors.receive((ctx, m) -> onReadyMessage(m),
                (ctx, signal) -> signal instanceof PostStop ? onUnexpectedStop() : Behaviors.unhandled());
    }

    private Behavior<Command> onReadyMessage(Command m) {
        if (m instanceof DrainSubmissions) {
            return onDrainSubmissions();
        } else if (m instanceof LaneProtocol.Answer a) {
            return onAnswer(a);
        } else if (m instanceof LaneFlushFailed f) {
            return onLaneFlushFailed(f);
        } else if (m instanceof LaneReady r) {
            return onLaneReady(r);
        } else if (m instanceof LaneFailed f) {
            return laneFailed(f.lane(), f.connectionId(), f.cause());
        } else if (m instanceof LaneReplaced r) {
            return afterChange(() -> lanes.replaced(r));
        } else if (m instanceof LaneRecovered r) {
            return afterChange(() -> lanes.recovered(r));
        } else if (m instanceof LaneAdded a) {
            return afterChange(() -> lanes.added(a));
        } else if (m instanceof ReplayDone) {
            return same(ops::replayDone);
        } else if (m instanceof KeepaliveTick) {
            return onKeepaliveTick();
        } else if (m instanceof ProbeLanes) {
            return onProbeLanes();
        } else if (m instanceof Abort a) {
            return enterFailed(new EndpointFailedException("endpoint " + channel.name() + " was aborted: "
                    + a.reason()));
        } else if (m instanceof DrainFenceQueue) {
            // A restarted request leaving the queue is judged again, and may end the endpoint.
            return afterChange(ops::drainFenceQueue);
        } else if (m instanceof StrongFenceDone) {
            return same(ops.fences::completeIfDone);
        } else if (m instanceof Close c) {
            return onClose(c);
        }
        return Behaviors.unhandled();
    }

    private Behavior<Command> onLaneReady(LaneReady m) {
        ops.laneReady(m.lane(), m.connectionId());
        return Behaviors.same();
    }

    /** Runs a handler's work; the behavior stays. */
    private static Behavior<Command> same(Runnable work) {
        work.run();
        return Behaviors.same();
    }

    /**
     * The actor stopped while ready: only an unexpected exception does that (Pekko's default
     * supervision stops a failed actor). Nothing may hang: every request completes with an error.
     */
    private Behavior<Command> onUnexpectedStop() {
        end(new EndpointFailedException("endpoint " + channel.name()
                + " stopped after an internal error (see the log); its requests are failed"));
        return Behaviors.same();
    }

    /** Closed by the user: everything submitted from now on fails with {@link EndpointClosedException}. */
    private Behavior<Command> closed() {
        return Behaviors.receive(Command.class)
                .onMessage(DrainSubmissions.class, m -> rejectSubmissions(this::closedError))
                .onMessage(Retire.class, m -> Behaviors.stopped())
                .onMessage(Close.class, m -> {
                    m.replyTo().tell(Done.getInstance());
                    return Behaviors.same();
                })
                .onAnyMessage(EndpointActor::closeHandedOver)
                .build();
    }

    /** Failed: every request fails with the endpoint's failure. */
    private Behavior<Command> failed(EndpointFailedException cause) {
        return Behaviors.receive(Command.class)
                .onMessage(DrainSubmissions.class, m -> rejectSubmissions(() -> cause))
                .onMessage(Retire.class, m -> Behaviors.stopped())
                .onMessage(Close.class, m -> {
                    channel.markClosing();
                    m.replyTo().tell(Done.getInstance());
                    return Behaviors.same();
                })
                .onAnyMessage(EndpointActor::closeHandedOver)
                .build();
    }

    /** A connection that arrives after the end is closed, never leaked. */
    private static Behavior<Command> closeHandedOver(Command m) {
        if (m instanceof LaneReplaced r) {
            r.connection().close();
        } else if (m instanceof LaneRecovered r) {
            r.connection().close();
        } else if (m instanceof LaneAdded a) {
            a.connection().close();
        } else if (m instanceof Connected c && c.lanes() != null) {
            c.lanes().forEach(LaneConnection::close); // closed while connecting
        }
        return Behaviors.same();
    }

    // ---------------------------------------------------------------- connection

    private Behavior<Command> onConnected(Connected m, ActorRef<ConnectResult> replyTo) {
        if (m.error() != null) {
            Throwable cause = EndpointImpl.unwrap(m.error());
            EndpointFailedException e = new EndpointFailedException("endpoint " + channel.name() + " could not connect to "
                    + channel.peer() + ": " + cause, cause);
            log.warn("{}", e.getMessage());
            replyTo.tell(new ConnectResult(null, e));
            return enterFailed(e);
        }
        try {
            install(m.lanes());
        } catch (FencelineException e) {
            m.lanes().forEach(LaneConnection::close);
            replyTo.tell(new ConnectResult(null, e));
            return enterFailed(new EndpointFailedException(e.getMessage(), e));
        }
        if (log.isDebugEnabled()) { // the lanes are described when asked
            log.debug("endpoint {} connected: {}", channel.name(), channel.lanes());
        }
        replyTo.tell(new ConnectResult(facade, null));
        onDrainSubmissions();
        return ready();
    }

    /** The lanes; keepalive ticks come from the worker's one timer, every keepalive interval. */
    private void install(List<LaneConnection> connections) {
        lanes.installFirst(connections);
    }

    private void bind(int index, LaneConnection c) {
        c.bind(new LaneProtocol.Listener(ctx.getSelf(), index, c.id()));
    }

    // ---------------------------------------------------------------- submissions and posting

    private Behavior<Command> onDrainSubmissions() {
        channel.submissions().drainStarted();
        int budget = settings.submitBatch();
        while (budget > 0) {
            // The posted operations are counted after the next request is seen, not before: a calling
            // thread counts one before it submits anything after it, so a request seen here has every
            // operation posted before it counted by now (counted before, one posted between the count
            // and the take would be passed by the request it preceded, fence or not).
            boolean any = channel.submissions().peek() != null;
            if (!channel.direct().postingSettledOrWake()) {
                // Calling threads posted operations that are not answered yet: nothing submitted after
                // them may pass them, nor take numbers below theirs. The last answer wakes the actor.
                if (ops.flushes.hasUserFlushes()) {
                    ops.progressFlushes();
                }
                ops.updateGrant();
                return Behaviors.same();
            }
            if (!any) {
                break;
            }
            ops.accept(channel.submissions().poll());
            budget--;
        }
        if (budget == 0) {
            channel.submissions().drainAgain(); // more may remain: yield the thread, keep the batch bounded
        }
        if (ops.flushes.hasUserFlushes()) {
            ops.progressFlushes(); // the wake-up may be the answer to a direct active message
        }
        ops.updateGrant();
        return Behaviors.same();
    }

    private Behavior<Command> rejectSubmissions(Supplier<? extends FencelineException> error) {
        ops.reject(error);
        return Behaviors.same();
    }

    // ---------------------------------------------------------------- completions

    /** A lane answered: it was heard from; then the answer's work; then the grant may change. */
    private Behavior<Command> onAnswer(LaneProtocol.Answer m) {
        lanes.heard(m.lane(), m.connectionId());
        ops.answer(m);
        return Behaviors.same();
    }

    private Behavior<Command> onLaneFlushFailed(LaneFlushFailed m) {
        FlushTracker.Token t = ops.flushFailed(m.token(), m.error());
        return t == null ? Behaviors.same() : laneFailed(t.lane(), t.connectionId(), m.error());
    }

    /** Keepalive: idle lanes get probes; a lane whose probe is overdue fails like any other. */
    private Behavior<Command> onKeepaliveTick() {
        Keepalive.Tick tick = lanes.keepaliveTick();
        if (tick.failed() < 0) {
            ops.scheduleKeepalive();
            return Behaviors.same();
        }
        LaneConnection c = ops.slots.table().connection(tick.failed());
        return laneFailed(tick.failed(), c.id(), new EndpointFailedException("keepalive: lane " + tick.failed() + " ("
                + c.transport() + ") did not answer a probe within " + settings.keepaliveTimeout()));
    }

    /**
     * Every live lane is probed now (one whose probe is out already keeps it); a lane fails only if
     * its probe then goes unanswered for the keepalive timeout, as on any idle lane.
     */
    private Behavior<Command> onProbeLanes() {
        if (settings.keepaliveInterval().isZero()) {
            return Behaviors.same(); // keepalive is off: there is no timeout to fail a lane by
        }
        keepalive.suspect(clock.getAsLong());
        // The periodic tick comes an interval apart; this one is due when the probes' timeout ends.
        timers.startSingleTimer("probe-deadline", KeepaliveTick.INSTANCE,
                settings.keepaliveTimeout().plusMillis(1));
        return onKeepaliveTick();
    }

    // ---------------------------------------------------------------- reconfiguration

    private Behavior<Command> laneFailed(int lane, long connectionId, Throwable cause) {
        EndpointFailedException e = lanes.laneFailed(lane, connectionId, cause);
        if (e == null) {
            e = ops.takeUnordered();
        }
        return e == null ? Behaviors.same() : enterFailed(e);
    }

    /** A lane change whose replay may have found copies that could be applied late: then the endpoint ends. */
    private Behavior<Command> afterChange(Runnable change) {
        change.run();
        EndpointFailedException e = ops.takeUnordered();
        return e == null ? Behaviors.same() : enterFailed(e);
    }

    // ---------------------------------------------------------------- failure and close

    private Behavior<Command> enterFailed(EndpointFailedException e) {
        timers.cancelAll();
        retireLater();
        end(e);
        return failed(e);
    }

    /**
     * The endpoint failed: every request fails with {@code e} and its lanes close. No timer: it runs
     * as the actor stops, too.
     */
    private void end(EndpointFailedException e) {
        channel.events().endpointFailed(e);
        channel.grant().revoke();
        channel.publishFailure(e);
        channel.terminate(e);
        ops.slots.closeAll(ops.revocations); // first: what they say decides each request's error
        channel.publishLanesDown();
        ops.failEverything(e);
        rejectSubmissions(() -> e);
    }

    private Behavior<Command> onClose(Close m) {
        timers.cancelAll();
        retireLater();
        channel.markClosing();
        if (log.isDebugEnabled()) {
            log.debug("endpoint {} closing: {}", channel.name(), counters);
        }
        // The facade queued a flush behind every earlier operation and sends Close when it completed,
        // so nothing accepted is outstanding here except what failed to flush.
        channel.grant().revoke();
        channel.terminate(closedError());
        ops.slots.closeAll(ops.revocations);
        channel.publishLanesDown();
        ops.failEverything(new EndpointClosedException("endpoint " + channel.name() + " was closed"));
        rejectSubmissions(this::closedError);
        m.replyTo().tell(Done.getInstance());
        return closed();
    }

    /**
     * The endpoint ended: the actor stops after connect-timeout, so that a worker whose services
     * connect and close endpoints all day does not keep every one it ever had. Until then it closes
     * any connection still handed to it (a connect that completes late, a replacement lane); the
     * facade needs no actor once the endpoint ended (its submissions fail on the caller's thread).
     */
    private void retireLater() {
        timers.startSingleTimer("retire", Retire.INSTANCE, settings.connectTimeout());
    }

    private EndpointClosedException closedError() {
        return new EndpointClosedException("endpoint " + channel.name() + " is closed");
    }
}
