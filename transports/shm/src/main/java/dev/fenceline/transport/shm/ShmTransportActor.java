package dev.fenceline.transport.shm;

import dev.fenceline.EndpointFailedException;
import dev.fenceline.FencelineException;
import dev.fenceline.spi.LaneConnection;
import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.HashMap;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.function.Predicate;
import java.util.function.Supplier;
import org.apache.pekko.actor.typed.ActorRef;
import org.apache.pekko.actor.typed.Behavior;
import org.apache.pekko.actor.typed.PostStop;
import org.apache.pekko.actor.typed.javadsl.ActorContext;
import org.apache.pekko.actor.typed.javadsl.Behaviors;
import org.apache.pekko.actor.typed.javadsl.TimerScheduler;

/**
 * The shm transport's control plane: a child of the worker actor that owns connecting to peers (a
 * CONNECT written into the peer's inbox, its answer or the connect-timeout), one {@link ShmPeerActor}
 * per peer process this worker has mapped (connected to, or connected from), the quarantine of closed
 * registrations, and the periodic housekeeping (mappings of closed segments, gates a stopped peer
 * still held, an inbox a dead producer left blocked). Every wait is a timer.
 *
 * <p>The data path does not pass through it: the polling thread applies and answers records, and
 * the actor only hands it decisions ({@link Backend#peerGone}) that must be carried out there,
 * because lanes report their completions from that thread only.
 */
final class ShmTransportActor {
    /** The transport actor's message protocol. */
    sealed interface Command {
    }

    /**
     * An endpoint connects to a peer worker.
     *
     * @param peer the peer worker
     * @param address the peer's shm address
     * @param result completed with the lanes, or failed with the reason
     */
    record Connect(UUID peer, byte[] address, CompletableFuture<List<LaneConnection>> result) implements Command {
    }

    /**
     * The polling thread read the peer's answer to a CONNECT.
     *
     * @param conn the connection it answers
     * @param limit the largest payload the peer takes in one record, as it wrote it (unchecked)
     */
    record Connected(long conn, int limit) implements Command {
    }

    /**
     * Timer: the connect of {@code conn} got no answer in time.
     *
     * @param conn the connection
     */
    record ConnectTimedOut(long conn) implements Command {
    }

    /**
     * This worker mapped a peer's control segment: from now on its process is watched.
     *
     * @param peer the peer's control segment
     */
    record PeerSeen(Inbox peer) implements Command {
    }

    /**
     * A peer's watcher found its worker closed or its process gone.
     *
     * @param peer the peer's control segment
     */
    record PeerGone(Inbox peer) implements Command {
    }

    /**
     * This worker's own inbox was written outside the ring's protocol and is read no more: the
     * connects waiting for an answer there fail now rather than at their timeout.
     *
     * @param why makes each one's failure
     */
    record InboxBroke(Supplier<EndpointFailedException> why) implements Command {
    }

    /**
     * A peer's watcher found its heartbeat standing still for the keepalive timeout: the process is
     * stopped or paused.
     *
     * @param peer the peer's control segment
     * @param timeout how long it stood still
     */
    record PeerStalled(Inbox peer, Duration timeout) implements Command {
    }

    /**
     * A registered region was closed: its memory stays reachable and its slot taken a while.
     *
     * @param slot its key-table slot
     * @param memory its memory, kept reachable until the quarantine ends
     */
    record Quarantine(int slot, ByteBuffer memory) implements Command {
    }

    /**
     * Timer: a closed registration's quarantine is over.
     *
     * @param slot its key-table slot
     * @param memory its memory, let go now
     */
    record QuarantineOver(int slot, ByteBuffer memory) implements Command {
    }

    /**
     * The timer key of a quarantine (not the message: a buffer's hash reads all its bytes).
     *
     * @param slot the key-table slot
     */
    private record QuarantineKey(int slot) {
    }

    /** Timer: the periodic housekeeping. */
    enum Housekeeping implements Command {
        /** The one instance. */
        TICK
    }

    /**
     * A connect on its way: what the transport set up for it.
     *
     * @param conn the connection id
     * @param peer the peer's control segment
     * @param lane the ring lane made for it, not yet handed out
     */
    record Dial(long conn, Inbox peer, ShmLane lane) {
    }

    /** What the actor needs of the transport; the transport's own methods, so the actor is testable alone. */
    interface Backend {
        /** @return the worker's name, for messages */
        String workerName();

        /**
         * Maps the peer's inbox, takes a gate and writes the CONNECT.
         *
         * @param peer the peer worker
         * @param address its shm address
         * @return the connect under way
         * @throws FencelineException why it cannot be made
         */
        Dial dial(UUID peer, byte[] address);

        /**
         * The peer answered.
         *
         * @param dial the connect
         * @param limit the largest payload the peer takes, checked
         * @return the lanes for the endpoint
         */
        List<LaneConnection> connected(Dial dial, int limit);

        /**
         * A connect failed or timed out: a late answer finds nothing, and its gate is given back.
         *
         * @param dial the connect
         */
        void abandon(Dial dial);

        /**
         * A peer worker closed or its process is gone: the polling thread fails its lanes and forgets
         * its connections.
         *
         * @param peer its control segment
         */
        void peerGone(Inbox peer);

        /**
         * A peer process has not run for the keepalive timeout: the polling thread fails its ring
         * lanes, as keepalive failed each of them when they were probed one by one.
         *
         * @param peer its control segment
         * @param timeout how long it stood still
         */
        void peerStalled(Inbox peer, Duration timeout);

        /** The periodic housekeeping, see the class comment. */
        void housekeeping();

        /**
         * A closed registration's slot may be reused.
         *
         * @param slot its key-table slot
         */
        void release(int slot);
    }

    /** A connect waiting for its answer. */
    private record Pending(UUID peer, Dial dial, CompletableFuture<List<LaneConnection>> result) {
    }

    private final ActorContext<Command> ctx;
    private final TimerScheduler<Command> timers;
    private final Backend backend;
    private final Duration connectTimeout;
    private final Duration quarantine;
    private final Predicate<Inbox> serving;
    private final ShmPeerActor.StallWatch stall;
    private final Map<Long, Pending> pending = new HashMap<>();
    private final Map<Inbox, ActorRef<ShmPeerActor.Command>> peers = new IdentityHashMap<>();
    private long peerCount;

    private ShmTransportActor(ActorContext<Command> ctx, TimerScheduler<Command> timers, Backend backend,
            Duration connectTimeout, Duration quarantine, Predicate<Inbox> serving, ShmPeerActor.StallWatch stall) {
        this.ctx = ctx;
        this.stall = stall;
        this.timers = timers;
        this.backend = backend;
        this.connectTimeout = connectTimeout;
        this.quarantine = quarantine;
        this.serving = serving;
    }

    /**
     * @param backend the transport
     * @param livenessInterval how often peers' processes are checked, and housekeeping runs
     * @param connectTimeout how long a peer may take to answer a CONNECT
     * @param quarantine how long a closed registration stays reachable
     * @param serving whether a peer worker did not close and its process still runs
     * @param stall how a stopped peer is seen
     * @return the behavior
     */
    static Behavior<Command> create(Backend backend, Duration livenessInterval, Duration connectTimeout,
            Duration quarantine, Predicate<Inbox> serving, ShmPeerActor.StallWatch stall) {
        return Behaviors.setup(ctx -> Behaviors.withTimers(timers -> {
            timers.startTimerWithFixedDelay(Housekeeping.TICK, livenessInterval);
            return new ShmTransportActor(ctx, timers, backend, connectTimeout, quarantine, serving, stall)
                    .running();
        }));
    }

    private Behavior<Command> running() {
        return Behaviors.receive(Command.class)
                .onMessage(Connect.class, this::onConnect)
                .onMessage(Connected.class, this::onConnected)
                .onMessage(ConnectTimedOut.class, this::onTimedOut)
                .onMessage(PeerSeen.class, this::onPeerSeen)
                .onMessage(PeerGone.class, this::onPeerGone)
                .onMessage(InboxBroke.class, this::onInboxBroke)
                .onMessage(PeerStalled.class, m -> {
                    if (peers.containsKey(m.peer())) {
                        backend.peerStalled(m.peer(), m.timeout());
                    }
                    return Behaviors.same();
                })
                .onMessage(Quarantine.class, m -> {
                    timers.startSingleTimer(new QuarantineKey(m.slot()), new QuarantineOver(m.slot(), m.memory()),
                            quarantine);
                    return Behaviors.same();
                })
                .onMessage(QuarantineOver.class, m -> {
                    backend.release(m.slot());
                    return Behaviors.same();
                })
                .onMessageEquals(Housekeeping.TICK, () -> {
                    backend.housekeeping();
                    peers.values().forEach(p -> p.tell(ShmPeerActor.Check.TICK)); // one wake-up for all peers
                    return Behaviors.same();
                })
                .onSignal(PostStop.class, s -> {
                    for (Pending p : pending.values()) {
                        backend.abandon(p.dial());
                        p.result().completeExceptionally(new EndpointFailedException("shm: worker '"
                                + backend.workerName() + "' stopped during the connect to " + p.peer()));
                    }
                    pending.clear();
                    return Behaviors.same();
                })
                .build();
    }

    private Behavior<Command> onConnect(Connect m) {
        Dial d;
        try {
            d = backend.dial(m.peer(), m.address());
        } catch (FencelineException e) {
            m.result().completeExceptionally(e);
            return Behaviors.same();
        } catch (RuntimeException e) { // a peer-written address or segment we could not read: this connect fails
            m.result().completeExceptionally(new EndpointFailedException("shm: cannot connect to " + m.peer() + ": "
                    + e, e));
            return Behaviors.same();
        }
        pending.put(d.conn(), new Pending(m.peer(), d, m.result()));
        watch(d.peer()); // a peer that dies now fails the connect at once, not at the timeout
        timers.startSingleTimer(d.conn(), new ConnectTimedOut(d.conn()), connectTimeout);
        return Behaviors.same();
    }

    private Behavior<Command> onConnected(Connected m) {
        Pending p = pending.remove(m.conn());
        if (p == null) {
            return Behaviors.same(); // timed out already, or a peer answering what it was never asked
        }
        timers.cancel(m.conn());
        if (m.limit() < 64) {
            backend.abandon(p.dial());
            p.result().completeExceptionally(new FencelineException("shm: " + p.dial().peer().name + "'s CONNECTED"
                    + " names a largest payload of " + m.limit() + " bytes (at least 64, in a message of at least"
                    + " 12 bytes)"));
            return Behaviors.same();
        }
        List<LaneConnection> lanes = backend.connected(p.dial(), m.limit());
        if (!p.result().complete(lanes)) {
            lanes.forEach(LaneConnection::close); // nobody waits for them any more
        }
        return Behaviors.same();
    }

    private Behavior<Command> onTimedOut(ConnectTimedOut m) {
        Pending p = pending.remove(m.conn());
        if (p != null) {
            backend.abandon(p.dial());
            p.result().completeExceptionally(new EndpointFailedException("shm: " + p.dial().peer().name
                    + " did not answer within " + connectTimeout));
        }
        return Behaviors.same();
    }

    private Behavior<Command> onPeerSeen(PeerSeen m) {
        watch(m.peer());
        return Behaviors.same();
    }

    private void watch(Inbox peer) {
        if (!peers.containsKey(peer)) {
            peers.put(peer, ctx.spawn(ShmPeerActor.create(peer, serving, stall, ctx.getSelf()),
                    "peer-" + peer.pid + "-" + (++peerCount)));
        }
    }

    private Behavior<Command> onInboxBroke(InboxBroke m) {
        pending.values().forEach(p -> {
            timers.cancel(p.dial().conn());
            backend.abandon(p.dial());
            p.result().completeExceptionally(m.why().get());
        });
        pending.clear();
        return Behaviors.same();
    }

    private Behavior<Command> onPeerGone(PeerGone m) {
        if (peers.remove(m.peer()) == null) {
            return Behaviors.same();
        }
        backend.peerGone(m.peer());
        pending.values().removeIf(p -> {
            if (p.dial().peer() != m.peer()) {
                return false;
            }
            timers.cancel(p.dial().conn());
            backend.abandon(p.dial());
            p.result().completeExceptionally(new EndpointFailedException("shm: the connect ended: the "
                    + m.peer().goneReason()));
            return true;
        });
        return Behaviors.same();
    }
}
