package dev.fenceline.actor;

import dev.fenceline.ConfigurationException;
import dev.fenceline.EndpointFailedException;
import dev.fenceline.actor.EndpointCounters.Counter;
import dev.fenceline.actor.LaneProtocol.LaneAdded;
import dev.fenceline.actor.LaneProtocol.LaneRecovered;
import dev.fenceline.actor.LaneProtocol.LaneReplaced;
import dev.fenceline.internal.ErrorMode;
import dev.fenceline.internal.FenceMode;
import dev.fenceline.internal.FencelineSettings;
import dev.fenceline.internal.Keepalive;
import dev.fenceline.internal.LaneSelector;
import dev.fenceline.internal.LaneTable;
import dev.fenceline.spi.LaneConnection;
import java.util.List;
import java.util.function.LongSupplier;
import org.agrona.collections.LongHashSet;
import org.slf4j.Logger;

/**
 * Every change of an endpoint's lane table (docs/reconfiguration.md): the first table, and lane failures,
 * replacements, recoveries and additions, each applied in order and followed by the replay; and
 * keepalive, through which a silent lane becomes a failed one. Owned by the endpoint actor; no
 * other thread touches it.
 */
final class LaneChanges {
    /** Binds a connection's listener to its slot, so its events reach the endpoint. */
    @FunctionalInterface
    interface Binder {
        /**
         * @param slot the slot
         * @param connection the connection now in it
         */
        void bind(int slot, LaneConnection connection);
    }

    private final FencelineSettings settings;
    private final EndpointChannel channel;
    private final Logger log;
    private final Operations ops;
    private final Keepalive keepalive;
    private final LongSupplier clock;
    private final Binder binder;
    private final Runnable tellReplayDone;
    /** The channel's count of direct active messages answered by a peer, at the last keepalive tick. */
    private long lastDirectHeard;

    /**
     * @param settings the runtime settings
     * @param channel the endpoint's channel, where the lane table is published
     * @param log the endpoint's log
     * @param ops the endpoint's operations, restarted after a change
     * @param keepalive the endpoint's keepalive, reset for changed slots
     * @param clock the time (virtual under the deterministic simulation)
     * @param binder binds new connections
     * @param tellReplayDone sends the endpoint {@code ReplayDone}
     */
    LaneChanges(FencelineSettings settings, EndpointChannel channel, Logger log, Operations ops, Keepalive keepalive,
            LongSupplier clock, Binder binder, Runnable tellReplayDone) {
        this.settings = settings;
        this.channel = channel;
        this.log = log;
        this.ops = ops;
        this.keepalive = keepalive;
        this.clock = clock;
        this.binder = binder;
        this.tellReplayDone = tellReplayDone;
    }

    /**
     * @param connecting a transport's connect
     * @param timeout how long it may take
     * @return a copy that fails after the timeout; lanes that arrive after it are closed, not leaked
     */
    static java.util.concurrent.CompletableFuture<List<LaneConnection>> bounded(
            java.util.concurrent.CompletionStage<List<LaneConnection>> connecting, java.time.Duration timeout) {
        java.util.concurrent.CompletableFuture<List<LaneConnection>> own = connecting.toCompletableFuture();
        java.util.concurrent.CompletableFuture<List<LaneConnection>> bounded = own.thenApply(l -> l)
                .orTimeout(timeout.toMillis(), java.util.concurrent.TimeUnit.MILLISECONDS);
        own.thenAccept(late -> {
            if (bounded.isCompletedExceptionally()) {
                late.forEach(LaneConnection::close);
            }
        });
        return bounded;
    }

    private LaneTable table() {
        return ops.slots.table();
    }

    /**
     * Installs the connected lanes.
     *
     * @param connections the lanes, in slot order
     * @throws ConfigurationException if the fence mode is weak and RMA or atomics would use more
     *     than one lane
     */
    void installFirst(List<LaneConnection> connections) {
        LaneTable table = LaneTable.of(connections, settings.transports());
        long fenced = LaneSelector.fencedLanes(table);
        if (settings.fenceMode() == FenceMode.WEAK && Long.bitCount(fenced) > 1) {
            throw new ConfigurationException("fenceline.fence.mode = weak needs one lane for all RMA and atomics, but"
                    + " endpoint " + channel.name() + " would use lanes " + LaneTable.describeMask(fenced)
                    + " (" + table.describe() + "); use mode endpoint or strong");
        }
        for (int i = 0; i < connections.size(); i++) {
            binder.bind(i, connections.get(i));
        }
        install(table);
    }

    /**
     * @param lane a slot something was heard from
     * @param connectionId the connection that spoke (a stale one proves nothing)
     */
    void heard(int lane, long connectionId) {
        if (ops.slots.current(lane, connectionId)) {
            keepalive.heard(lane, clock.getAsLong());
        }
    }

    /**
     * A keepalive tick: probes go to the lanes not heard from for an interval (the idle interval
     * while nothing waits for a lane).
     *
     * @return what the tick found; the endpoint fails {@link Keepalive.Tick#failed()} if it is a slot
     */
    Keepalive.Tick keepaliveTick() {
        // Answers to direct active messages come to the channel, not to the endpoint: their arrival
        // counts as hearing from the lane that carries them (a probe may wait behind many of them).
        long answered = channel.direct().heard();
        if (answered != lastDirectHeard) {
            lastDirectHeard = answered;
            heard(ops.grants().messageLane(), ops.grants().messageConnection());
        }
        long now = clock.getAsLong();
        Keepalive.Tick tick = keepalive.tick(now, table().probedMask(), ops.quiet());
        for (int i = 0; i < table().size(); i++) {
            if ((tick.probes() & (1L << i)) != 0 && !ops.flushes.issue(FlushTracker.Probe.INSTANCE, i)) {
                // Answered at once (a lane that checks its peer's liveness itself): heard from now.
                keepalive.probeAnswered(i);
                keepalive.heard(i, now);
            }
        }
        return tick;
    }

    /**
     * Installs a table as it is (no replay): the first one, or the last before the endpoint fails.
     *
     * @param next the table
     */
    void install(LaneTable next) {
        keepalive.resize(next.size(), clock.getAsLong());
        ops.slots.install(next);
        channel.publishLanes(next);
        channel.keepaliveWanted(next.probedMask() != 0);
        channel.keepaliveNow(); // new slots: the next round ticks the endpoint and it says when next
    }

    /**
     * A lane failed (its transport said so, its flush failed, or keepalive gave up on it). In
     * failover mode, while another lane lives, the endpoint goes on without it.
     *
     * @param lane the slot
     * @param connectionId the connection that failed (a stale report changes nothing)
     * @param cause why
     * @return the endpoint's failure if it must fail now, else null
     */
    EndpointFailedException laneFailed(int lane, long connectionId, Throwable cause) {
        if (!ops.slots.current(lane, connectionId)) {
            return null;
        }
        LaneConnection dead = table().connection(lane);
        LaneTable next = table().withFailed(lane);
        if (settings.errorMode() != ErrorMode.FAILOVER || next.liveMask() == 0) {
            EndpointFailedException e = new EndpointFailedException("endpoint " + channel.name() + " lost lane " + lane
                    + " (" + dead.transport() + ")" + (next.liveMask() == 0 ? ", its last live lane" : "") + ": "
                    + cause, cause);
            log.warn("{}", e.getMessage());
            install(next);
            dead.close();
            ops.revocations.revoke(dead);
            return e;
        }
        log.info("endpoint {}: lane {} failed ({}); failing over to lanes {}", channel.name(), lane, cause,
                LaneTable.describeMask(next.liveMask()));
        dead.abort(cause); // still wanted: the transport may recover it
        ops.revocations.revoke(dead); // before anything of it is sent again
        ops.slots.givenUp(lane, dead);
        channel.laneCounters().add(lane, LaneCounters.Counter.FAILOVERS, 1);
        reconfigure(next, 1L << lane);
        channel.events().failedOver(lane, dead.transport(), cause, Long.bitCount(next.liveMask()));
        return null;
    }

    /** @param m the transport put a new connection behind a slot */
    void replaced(LaneReplaced m) {
        if (!ops.slots.current(m.lane(), m.oldConnectionId())) {
            m.connection().close(); // the slot moved on already
            return;
        }
        LaneConnection old = table().connection(m.lane());
        old.close();
        ops.revocations.revoke(old); // before anything of it is sent again
        binder.bind(m.lane(), m.connection());
        reconfigure(table().withSlot(m.lane(), m.connection()), 1L << m.lane());
        channel.events().replaced(m.lane(), m.connection().transport());
    }

    /** @param m the transport reconnected a failed slot */
    void recovered(LaneRecovered m) {
        if (m.lane() < 0 || m.lane() >= table().size() || table().isLive(m.lane())) {
            m.connection().close(); // not a failed slot
            return;
        }
        binder.bind(m.lane(), m.connection());
        reconfigure(table().withSlot(m.lane(), m.connection()), 1L << m.lane());
        channel.events().recovered(m.lane(), m.connection().transport());
    }

    /** @param m the transport opened another lane to the peer */
    void added(LaneAdded m) {
        int slot = table().size();
        if (slot >= LaneTable.MAX_LANES) {
            m.connection().close();
            return;
        }
        binder.bind(slot, m.connection());
        reconfigure(table().withAdded(m.connection()), 1L << slot);
        channel.events().added(slot, m.connection().transport());
    }

    /**
     * Applies a new lane table: the fence record learns every changed slot, then the replay. A
     * request with a fragment on a changed slot is restarted on the current lanes with its epoch,
     * through the fence decision again; requests in the fence queue stay there; lane flushes of
     * changed slots are dropped and re-issued on every live lane after the replay. No flush and no
     * strong fence starts before {@code ReplayDone}.
     */
    private void reconfigure(LaneTable next, long changed) {
        ops.replayStarted();
        ops.adoptReturned(); // posted on a connection that ended: restarted with the rest
        long had = table().liveMask() & changed;
        install(next);
        ops.slots.forgetUse(changed);
        keepalive.reset(changed, clock.getAsLong());
        channel.counters().increment(Counter.RECONFIGURATIONS);
        LongHashSet neverSent = ops.slots.unpark(changed);
        // Nothing in flight (every connect's first table): no plan, and no table made for it.
        ReplayPlanner.Plan plan = !ops.inflight.anyFragments() ? ReplayPlanner.Plan.NONE
                : ReplayPlanner.plan(ops.inflight.fragments(), neverSent, ops.inflight::isHeld, ops.slots::current,
                        ops.revocations::fate);
        for (long token : plan.held()) {
            ops.inflight.hold(token); // its old connection will answer it; fenced work after it waits
        }
        for (long token : plan.dropped()) {
            InflightTable.Fragment f = ops.inflight.fragments().remove(token);
            if (!f.request().done) {
                channel.laneCounters().add(f.lane(), LaneCounters.Counter.RESTARTS, 1);
            }
        }
        ops.fences.slotsChanged(changed, had, ops.flushes.dropStale());
        for (ReplayPlanner.Restart x : plan.restarts()) { // in issue order, each with its own epoch
            ops.restart(x);
        }
        channel.events().replay(plan.restarts().size(), plan.dropped().length);
        tellReplayDone.run();
    }
}
