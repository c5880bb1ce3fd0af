package dev.fenceline.transport.sim;

import dev.fenceline.EndpointFailedException;
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
 * The sim transport's control plane, a child of the worker actor: it answers connects. A peer
 * that is partitioned from this worker gets no handshake through, as a real network would not: the
 * connect waits until the partition heals or {@code connect-timeout} passes, by a timer (on a
 * deterministic simulation's virtual time when there is one).
 */
final class SimTransportActor {
    /** The sim transport actor's message protocol. */
    sealed interface Command {
    }

    /**
     * An endpoint connects to a peer worker.
     *
     * @param peer the peer worker
     * @param result completed with the lanes, or failed with the reason
     */
    record Connect(UUID peer, CompletableFuture<List<LaneConnection>> result) implements Command {
    }

    /**
     * A partition between this worker and {@code peer} healed.
     *
     * @param peer the other worker
     */
    record Healed(UUID peer) implements Command {
    }

    /**
     * Timer: connect {@code id} got no handshake through in time.
     *
     * @param id the connect
     */
    record ConnectTimedOut(long id) implements Command {
    }

    /** What the actor needs of the transport. */
    interface Backend {
        /** @return the worker's name, for messages */
        String workerName();

        /**
         * @param peer a worker id
         * @return whether a sim worker with that id is open in this JVM
         */
        boolean exists(UUID peer);

        /**
         * @param peer an open peer
         * @return whether a partition cuts it off from this worker
         */
        boolean partitioned(UUID peer);

        /**
         * @param peer an open, reachable peer
         * @return a new connection per configured lane, in lane order
         */
        List<LaneConnection> lanes(UUID peer);
    }

    /** A connect waiting for a partition to heal. */
    private record Pending(UUID peer, CompletableFuture<List<LaneConnection>> result) {
    }

    private final TimerScheduler<Command> timers;
    private final Backend backend;
    private final Duration connectTimeout;
    private final Map<Long, Pending> pending = new HashMap<>();
    private long connects;

    private SimTransportActor(TimerScheduler<Command> timers, Backend backend, Duration connectTimeout) {
        this.timers = timers;
        this.backend = backend;
        this.connectTimeout = connectTimeout;
    }

    /**
     * @param backend the transport
     * @param connectTimeout how long a connect waits for a partition to heal
     * @return the behavior
     */
    static Behavior<Command> create(Backend backend, Duration connectTimeout) {
        return Behaviors.withTimers(timers -> new SimTransportActor(timers, backend, connectTimeout).running());
    }

    private Behavior<Command> running() {
        return Behaviors.receive(Command.class)
                .onMessage(Connect.class, this::onConnect)
                .onMessage(Healed.class, this::onHealed)
                .onMessage(ConnectTimedOut.class, this::onTimedOut)
                .onSignal(PostStop.class, s -> {
                    pending.values().forEach(p -> p.result().completeExceptionally(new EndpointFailedException(
                            "sim: worker '" + backend.workerName() + "' stopped during the connect to " + p.peer())));
                    pending.clear();
                    return Behaviors.same();
                })
                .build();
    }

    private Behavior<Command> onConnect(Connect m) {
        if (!backend.exists(m.peer())) {
            m.result().completeExceptionally(new EndpointFailedException("sim: no open worker " + m.peer()
                    + " in this JVM"));
        } else if (backend.partitioned(m.peer())) {
            long id = ++connects;
            pending.put(id, new Pending(m.peer(), m.result()));
            timers.startSingleTimer(id, new ConnectTimedOut(id), connectTimeout);
        } else {
            handOut(m.peer(), m.result());
        }
        return Behaviors.same();
    }

    private void handOut(UUID peer, CompletableFuture<List<LaneConnection>> result) {
        List<LaneConnection> lanes;
        try {
            lanes = backend.lanes(peer);
        } catch (dev.fenceline.FencelineException e) { // it closed just now
            result.completeExceptionally(e);
            return;
        }
        if (!result.complete(lanes)) {
            lanes.forEach(LaneConnection::close); // nobody waits for them any more
        }
    }

    private Behavior<Command> onHealed(Healed m) {
        pending.entrySet().removeIf(e -> {
            Pending p = e.getValue();
            if (!p.peer().equals(m.peer()) || (backend.exists(p.peer()) && backend.partitioned(p.peer()))) {
                return false; // another peer, or cut off again already: it waits on
            }
            timers.cancel(e.getKey());
            if (backend.exists(p.peer())) {
                handOut(p.peer(), p.result());
            } else {
                p.result().completeExceptionally(new EndpointFailedException("sim: worker " + p.peer()
                        + " closed while a partition kept the connect from it"));
            }
            return true;
        });
        return Behaviors.same();
    }

    private Behavior<Command> onTimedOut(ConnectTimedOut m) {
        Pending p = pending.remove(m.id());
        if (p != null) {
            p.result().completeExceptionally(new EndpointFailedException("sim: worker " + p.peer()
                    + " is partitioned from worker '" + backend.workerName() + "': no handshake got through within "
                    + connectTimeout));
        }
        return Behaviors.same();
    }
}
