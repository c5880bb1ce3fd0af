package dev.fenceline.transport.shm;

import java.time.Duration;
import java.util.function.LongSupplier;
import java.util.function.Predicate;
import java.util.function.ToLongFunction;
import org.apache.pekko.actor.typed.ActorRef;
import org.apache.pekko.actor.typed.Behavior;
import org.apache.pekko.actor.typed.javadsl.Behaviors;

/**
 * Watches one peer worker whose control segment this worker mapped: at each of the transport
 * actor's liveness ticks it checks that the worker did not close and that its process still runs
 * (its pid with the same start time, so a reused pid does not pass), and when either fails, tells
 * the transport actor once and stops; and that the process's heartbeat moved within the keepalive
 * timeout, and when it stood still that long (the process is stopped or paused), tells the
 * transport actor once per stall. A peer worker is the shm backend's own unit: all lanes to it, and
 * all its connections here, share its fate, so it is watched once rather than probed through every
 * lane. The tick is the parent's, not a timer per
 * peer: every timer wakes a dispatcher thread beside the spinning polling threads, and per-peer
 * timers cost the AM latency row a measurable share on two cores (docs/transports.md).
 */
final class ShmPeerActor {
    /** The peer watcher's message protocol. */
    sealed interface Command {
    }

    /** The transport actor's tick: time to check the worker and its process. */
    enum Check implements Command {
        /** The one instance. */
        TICK
    }

    /**
     * How a stalled peer is seen.
     *
     * @param heartbeat reads a peer's heartbeat count
     * @param timeout how long it may stand still; zero: a stall fails nothing (keepalive is off)
     * @param clock nanoseconds
     */
    record StallWatch(ToLongFunction<Inbox> heartbeat, Duration timeout, LongSupplier clock) {
        /** Stalls are not watched. */
        static final StallWatch OFF = new StallWatch(p -> 0, Duration.ZERO, System::nanoTime);
    }

    private final Inbox peer;
    private final Predicate<Inbox> serving;
    private final StallWatch stall;
    private final ActorRef<ShmTransportActor.Command> transport;
    private long lastBeat;
    private long lastBeatAt;
    private boolean stalled;

    private ShmPeerActor(Inbox peer, Predicate<Inbox> serving, StallWatch stall,
            ActorRef<ShmTransportActor.Command> transport) {
        this.peer = peer;
        this.serving = serving;
        this.stall = stall;
        this.transport = transport;
        this.lastBeat = stall.heartbeat().applyAsLong(peer);
        this.lastBeatAt = stall.clock().getAsLong();
    }

    /**
     * @param peer the peer's control segment
     * @param serving whether the peer worker did not close and its process still runs
     * @param stall how a stall is seen
     * @param transport told {@link ShmTransportActor.PeerGone} once the worker closed or its process is
     *     gone, and {@link ShmTransportActor.PeerStalled} once per stall
     * @return the behavior
     */
    static Behavior<Command> create(Inbox peer, Predicate<Inbox> serving, StallWatch stall,
            ActorRef<ShmTransportActor.Command> transport) {
        return Behaviors.setup(ctx -> new ShmPeerActor(peer, serving, stall, transport).watching());
    }

    private Behavior<Command> watching() {
        return Behaviors.receive(Command.class)
                .onMessageEquals(Check.TICK, this::onTick)
                .build();
    }

    private Behavior<Command> onTick() {
        if (!serving.test(peer)) {
            transport.tell(new ShmTransportActor.PeerGone(peer));
            return Behaviors.stopped();
        }
        if (stall.timeout().isZero()) {
            return Behaviors.same();
        }
        long beat = stall.heartbeat().applyAsLong(peer);
        long now = stall.clock().getAsLong();
        if (beat != lastBeat) {
            lastBeat = beat;
            lastBeatAt = now;
            stalled = false;
        } else if (!stalled && now - lastBeatAt >= stall.timeout().toNanos()) {
            stalled = true; // once: lanes made while it stays stopped fail by their connect timeout
            transport.tell(new ShmTransportActor.PeerStalled(peer, stall.timeout()));
        }
        return Behaviors.same();
    }
}
