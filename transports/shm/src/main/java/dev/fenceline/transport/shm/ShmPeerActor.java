package dev.fenceline.transport.shm;

import java.util.function.Predicate;
import org.apache.pekko.actor.typed.ActorRef;
import org.apache.pekko.actor.typed.Behavior;
import org.apache.pekko.actor.typed.javadsl.Behaviors;

/**
 * Watches one peer process whose control segment this worker mapped: at each of the transport
 * actor's liveness ticks it checks that the process still runs (its pid with the same start time,
 * so a reused pid does not pass), and when it does not, tells the transport actor once and stops.
 * A peer process is the shm backend's own unit: all lanes to it, and all its connections here,
 * share its fate. The tick is the parent's, not a timer per peer: every timer wakes a dispatcher
 * thread beside the spinning polling threads, and per-peer timers cost the AM latency row a
 * measurable share on two cores (docs/transports.md).
 */
final class ShmPeerActor {
    /** The peer watcher's message protocol. */
    sealed interface Command {
    }

    /** The transport actor's tick: time to check the process. */
    enum Check implements Command {
        /** The one instance. */
        TICK
    }

    private ShmPeerActor() {
    }

    /**
     * @param peer the peer's control segment
     * @param alive whether the peer's process still runs
     * @param transport told {@link ShmTransportActor.PeerDied} once the process is gone
     * @return the behavior
     */
    static Behavior<Command> create(Inbox peer, Predicate<Inbox> alive, ActorRef<ShmTransportActor.Command> transport) {
        return watching(peer, alive, transport);
    }

    private static Behavior<Command> watching(Inbox peer, Predicate<Inbox> alive,
            ActorRef<ShmTransportActor.Command> transport) {
        return Behaviors.receive(Command.class)
                .onMessageEquals(Check.TICK, () -> {
                    if (alive.test(peer)) {
                        return Behaviors.same();
                    }
                    transport.tell(new ShmTransportActor.PeerDied(peer));
                    return Behaviors.stopped();
                })
                .build();
    }
}
