package dev.fenceline.transport.tcp;

import dev.fenceline.EndpointFailedException;
import dev.fenceline.spi.LaneConnection;
import dev.fenceline.spi.support.ReconnectPolicy;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ThreadLocalRandom;
import java.util.function.Function;
import org.apache.pekko.actor.typed.ActorRef;
import org.apache.pekko.actor.typed.Behavior;
import org.apache.pekko.actor.typed.javadsl.ActorContext;
import org.apache.pekko.actor.typed.javadsl.Behaviors;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The tcp transport's control plane: a child of the worker actor that answers endpoints' connects
 * by spawning one {@link RailActor} per network path to the peer and collecting their first
 * connections. Each rail then lives on its own (reconnect, backoff, give up) and stops when its
 * endpoint closes its lane; all of them stop with this actor.
 */
final class TcpTransportActor {
    private static final Logger LOG = LoggerFactory.getLogger(TcpTransport.class);

    /** The transport actor's message protocol. */
    sealed interface Command {
    }

    /**
     * An endpoint connects to a peer.
     *
     * @param peer the peer worker
     * @param remotes the peer's addresses, one per rail, in rail order
     * @param result completed with the lanes that came up, in rail order, or failed if none did
     */
    record Connect(UUID peer, List<InetSocketAddress> remotes, CompletableFuture<List<LaneConnection>> result)
            implements Command {
    }

    /**
     * A rail's first connection came up or could not be made.
     *
     * @param connect the connect it belongs to
     * @param outcome the rail and its lane or failure
     */
    record RailFirst(long connect, RailActor.FirstOutcome outcome) implements Command {
    }

    /** The transport closed: stop every rail. */
    enum Shutdown implements Command {
        /** The one instance. */
        INSTANCE
    }

    /** One connect waiting for its rails. */
    private static final class PendingConnect {
        final UUID peer;
        final CompletableFuture<List<LaneConnection>> result;
        final RailActor.FirstOutcome[] outcomes;
        int answered;

        PendingConnect(UUID peer, int rails, CompletableFuture<List<LaneConnection>> result) {
            this.peer = peer;
            this.result = result;
            this.outcomes = new RailActor.FirstOutcome[rails];
        }
    }

    private final ActorContext<Command> ctx;
    private final RailActor.Connector connector;
    private final Function<InetSocketAddress, InetSocketAddress> localFor;
    private final ReconnectPolicy policy;
    private final Duration connectTimeout;
    private final Map<Long, PendingConnect> pending = new HashMap<>();
    private long connects;
    private long rails;

    private TcpTransportActor(ActorContext<Command> ctx, RailActor.Connector connector,
            Function<InetSocketAddress, InetSocketAddress> localFor, ReconnectPolicy policy, Duration connectTimeout) {
        this.ctx = ctx;
        this.connector = connector;
        this.localFor = localFor;
        this.policy = policy;
        this.connectTimeout = connectTimeout;
    }

    /**
     * @param connector opens connections
     * @param localFor the local address to connect to a remote one from, or null for any
     * @param policy the rails' reconnect arithmetic
     * @param connectTimeout the bound on one connection attempt
     * @return the behavior
     */
    static Behavior<Command> create(RailActor.Connector connector, Function<InetSocketAddress, InetSocketAddress> localFor,
            ReconnectPolicy policy, Duration connectTimeout) {
        return Behaviors.setup(ctx -> new TcpTransportActor(ctx, connector, localFor, policy, connectTimeout).running());
    }

    private Behavior<Command> running() {
        return Behaviors.receive(Command.class)
                .onMessage(Connect.class, this::onConnect)
                .onMessage(RailFirst.class, this::onRailFirst)
                .onMessage(Shutdown.class, m -> {
                    pending.values().forEach(p -> p.result.completeExceptionally(
                            new EndpointFailedException("tcp: the transport closed during the connect to " + p.peer)));
                    return Behaviors.stopped();
                })
                .build();
    }

    private Behavior<Command> onConnect(Connect m) {
        long id = ++connects;
        pending.put(id, new PendingConnect(m.peer(), m.remotes().size(), m.result()));
        // Not a message adapter: there is one per message class, and connects overlap.
        ActorRef<Command> self = ctx.getSelf();
        java.util.function.Consumer<RailActor.FirstOutcome> reply = o -> self.tell(new RailFirst(id, o));
        for (int i = 0; i < m.remotes().size(); i++) {
            InetSocketAddress remote = m.remotes().get(i);
            Rail rail = new Rail(i, localFor.apply(remote), remote, m.peer());
            ctx.spawn(RailActor.create(rail, connector, policy, connectTimeout, System::nanoTime,
                    () -> ThreadLocalRandom.current().nextLong(), reply), "rail-" + (++rails));
        }
        return Behaviors.same();
    }

    private Behavior<Command> onRailFirst(RailFirst m) {
        PendingConnect p = pending.get(m.connect());
        if (p == null) {
            return Behaviors.same();
        }
        RailActor.FirstOutcome o = m.outcome();
        p.outcomes[o.rail().index()] = o;
        if (++p.answered < p.outcomes.length) {
            return Behaviors.same();
        }
        pending.remove(m.connect());
        List<LaneConnection> up = new ArrayList<>();
        StringBuilder down = new StringBuilder();
        Throwable firstCause = null;
        for (RailActor.FirstOutcome r : p.outcomes) {
            if (r.lane() != null) {
                up.add(r.lane());
            } else {
                down.append(down.length() == 0 ? "" : "; ").append(r.rail().remote()).append(": ")
                        .append(r.cause().getMessage());
                firstCause = firstCause == null ? r.cause() : firstCause;
            }
        }
        if (up.isEmpty()) {
            // The first rail's failure as the cause: a TLS handshake's own exception, say, for the caller to inspect.
            p.result.completeExceptionally(new EndpointFailedException("tcp: cannot reach worker " + p.peer + ": "
                    + down, firstCause));
            return Behaviors.same();
        }
        if (down.length() > 0) {
            LOG.info("tcp {}: connected to {} over {} of {} rails; unreachable: {}", connector.workerName(), p.peer,
                    up.size(), p.outcomes.length, down);
        }
        if (!p.result.complete(List.copyOf(up))) {
            up.forEach(LaneConnection::close); // nobody waits for them any more
        }
        return Behaviors.same();
    }
}
