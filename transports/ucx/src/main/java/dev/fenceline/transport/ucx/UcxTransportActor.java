package dev.fenceline.transport.ucx;

import dev.fenceline.EndpointFailedException;
import dev.fenceline.FencelineException;
import dev.fenceline.spi.LaneConnection;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import org.apache.pekko.actor.typed.Behavior;
import org.apache.pekko.actor.typed.PostStop;
import org.apache.pekko.actor.typed.javadsl.Behaviors;
import org.apache.pekko.actor.typed.javadsl.TimerScheduler;

/**
 * The ucx transport's control plane: a child of the worker actor that owns connecting to peers (a
 * wireup the progress agent carries out, bounded by the connect-timeout timer), watching the peer
 * processes on this host (UCT's shared memory reports no peer failure of its own: a gone peer's
 * channels fail at the next tick), repeating endpoint-to-endpoint greetings at each tick, and the
 * quarantine of closed regions. Every wait is a timer.
 *
 * <p>The data path does not pass through it: the agent hands UCT the lanes' operations and
 * reports their answers; the actor only hands the agent decisions ({@link Backend}).
 */
final class UcxTransportActor {
    /** The transport actor's message protocol. */
    sealed interface Command {
    }

    /**
     * An endpoint connects to a peer worker.
     *
     * @param peer the peer worker
     * @param address its ucx address, as its worker address carried it
     * @param result completed with the lanes, or failed with the reason
     */
    record Connect(UUID peer, byte[] address, CompletableFuture<List<LaneConnection>> result) implements Command {
    }

    /**
     * The agent finished a connect.
     *
     * @param dial the connect
     * @param lanes its lanes
     */
    record Dialed(long dial, List<LaneConnection> lanes) implements Command {
    }

    /**
     * A connect failed.
     *
     * @param dial the connect
     * @param why the reason
     */
    record DialFailed(long dial, FencelineException why) implements Command {
    }

    /**
     * Timer: a connect got no answer in time.
     *
     * @param dial the connect
     */
    record ConnectTimedOut(long dial) implements Command {
    }

    /**
     * A peer process on this host, from now on watched.
     *
     * @param peer the peer worker
     * @param pid its process
     * @param start its process's start time
     */
    record PeerSeen(UUID peer, long pid, long start) implements Command {
    }

    /**
     * A peer worker the agent forgot: its process is no longer watched for it.
     *
     * @param peer the peer worker
     */
    record PeerForgotten(UUID peer) implements Command {
    }

    /**
     * A region closed: its memory and key-table slot stay for the quarantine.
     *
     * @param region the closed region
     */
    record Quarantine(UcxRegions.Closed region) implements Command {
    }

    /**
     * Timer: a quarantine is over.
     *
     * @param region the closed region
     */
    record QuarantineOver(UcxRegions.Closed region) implements Command {
    }

    /** Timer: the periodic tick (peer processes, greetings). */
    enum Tick implements Command {
        /** The one instance. */
        TICK
    }

    /** What the actor needs of the transport; its own methods, so the actor is testable alone. */
    interface Backend {
        /** @return the worker's name, for messages */
        String workerName();

        /**
         * Has the agent start a connect.
         *
         * @param dial the connect's id
         * @param peer the peer worker
         * @param address its ucx address
         * @throws FencelineException if the address is malformed
         */
        void dial(long dial, UUID peer, byte[] address);

        /** @param dial a connect that timed out or whose endpoint is gone */
        void abandon(long dial);

        /** The tick: the agent repeats unanswered greetings. */
        void tick();

        /** @param peer a peer worker whose process is gone */
        void peerGone(UUID peer);

        /**
         * @param pid a process
         * @param start its start time
         * @return whether it still runs
         */
        boolean alive(long pid, long start);
    }

    private record Pending(UUID peer, CompletableFuture<List<LaneConnection>> result) {
    }

    private record Watched(long pid, long start) {
    }

    private final TimerScheduler<Command> timers;
    private final Backend backend;
    private final Duration connectTimeout;
    private final Duration quarantine;
    private final Map<Long, Pending> pending = new HashMap<>();
    private final Map<UUID, Watched> watched = new HashMap<>();
    private long nextDial = 1;

    private UcxTransportActor(TimerScheduler<Command> timers, Backend backend, Duration connectTimeout,
            Duration quarantine) {
        this.timers = timers;
        this.backend = backend;
        this.connectTimeout = connectTimeout;
        this.quarantine = quarantine;
    }

    /**
     * @param backend the transport
     * @param livenessInterval how often peer processes are checked and greetings repeated
     * @param connectTimeout how long a connect may take
     * @param quarantine how long a closed region stays reachable
     * @return the behavior
     */
    static Behavior<Command> create(Backend backend, Duration livenessInterval, Duration connectTimeout,
            Duration quarantine) {
        return Behaviors.setup(ctx -> Behaviors.withTimers(timers -> {
            timers.startTimerWithFixedDelay(Tick.TICK, livenessInterval);
            return new UcxTransportActor(timers, backend, connectTimeout, quarantine).running();
        }));
    }

    private Behavior<Command> running() {
        return Behaviors.receive(Command.class)
                .onMessage(Connect.class, this::onConnect)
                .onMessage(Dialed.class, m -> {
                    Pending p = pending.remove(m.dial());
                    if (p == null) {
                        m.lanes().forEach(LaneConnection::close); // timed out: nobody waits for them
                    } else {
                        timers.cancel(m.dial());
                        if (!p.result().complete(m.lanes())) {
                            m.lanes().forEach(LaneConnection::close);
                        }
                    }
                    return Behaviors.same();
                })
                .onMessage(DialFailed.class, m -> {
                    Pending p = pending.remove(m.dial());
                    if (p != null) {
                        timers.cancel(m.dial());
                        p.result().completeExceptionally(m.why());
                    }
                    return Behaviors.same();
                })
                .onMessage(ConnectTimedOut.class, m -> {
                    Pending p = pending.remove(m.dial());
                    if (p != null) {
                        backend.abandon(m.dial());
                        p.result().completeExceptionally(new EndpointFailedException("ucx: " + p.peer()
                                + " did not answer the connect within " + connectTimeout));
                    }
                    return Behaviors.same();
                })
                .onMessage(PeerSeen.class, m -> {
                    watched.putIfAbsent(m.peer(), new Watched(m.pid(), m.start()));
                    return Behaviors.same();
                })
                .onMessage(PeerForgotten.class, m -> {
                    watched.remove(m.peer());
                    return Behaviors.same();
                })
                .onMessage(Quarantine.class, m -> {
                    timers.startSingleTimer(m.region(), new QuarantineOver(m.region()), quarantine);
                    return Behaviors.same();
                })
                .onMessage(QuarantineOver.class, m -> {
                    m.region().release();
                    return Behaviors.same();
                })
                .onMessageEquals(Tick.TICK, this::onTick)
                .onSignal(PostStop.class, s -> {
                    for (Map.Entry<Long, Pending> e : pending.entrySet()) {
                        backend.abandon(e.getKey());
                        e.getValue().result().completeExceptionally(new EndpointFailedException("ucx: worker '"
                                + backend.workerName() + "' stopped during the connect to " + e.getValue().peer()));
                    }
                    pending.clear();
                    return Behaviors.same();
                })
                .build();
    }

    private Behavior<Command> onConnect(Connect m) {
        long dial = nextDial++;
        try {
            backend.dial(dial, m.peer(), m.address());
        } catch (FencelineException e) {
            m.result().completeExceptionally(e);
            return Behaviors.same();
        }
        pending.put(dial, new Pending(m.peer(), m.result()));
        timers.startSingleTimer(dial, new ConnectTimedOut(dial), connectTimeout);
        return Behaviors.same();
    }

    private Behavior<Command> onTick() {
        backend.tick();
        watched.entrySet().removeIf(e -> {
            if (backend.alive(e.getValue().pid(), e.getValue().start())) {
                return false;
            }
            backend.peerGone(e.getKey());
            pending.entrySet().removeIf(p -> {
                if (!p.getValue().peer().equals(e.getKey())) {
                    return false;
                }
                timers.cancel(p.getKey());
                backend.abandon(p.getKey());
                p.getValue().result().completeExceptionally(new EndpointFailedException("ucx: the process of peer"
                        + " worker " + e.getKey() + " is gone; it died during the connect"));
                return true;
            });
            return true;
        });
        return Behaviors.same();
    }
}
