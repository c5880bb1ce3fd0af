package dev.fenceline.actor;

import dev.fenceline.Endpoint;
import dev.fenceline.FencelineException;
import dev.fenceline.actor.LaneProtocol.LaneAdded;
import dev.fenceline.actor.LaneProtocol.LaneFailed;
import dev.fenceline.actor.LaneProtocol.LaneFlushFailed;
import dev.fenceline.actor.LaneProtocol.LaneReady;
import dev.fenceline.actor.LaneProtocol.LaneRecovered;
import dev.fenceline.actor.LaneProtocol.LaneReplaced;
import dev.fenceline.spi.LaneConnection;
import java.util.List;
import java.util.concurrent.CompletionStage;
import java.util.function.Supplier;
import org.apache.pekko.Done;
import org.apache.pekko.actor.typed.ActorRef;

/**
 * The endpoint actor's message protocol, in one place: what the facade, the worker and the
 * endpoint itself send it ({@link Command}'s records here), and the lane events of
 * {@link LaneProtocol}, which transports cause through the endpoint's listener.
 */
public final class EndpointProtocol {
    private EndpointProtocol() {
    }

    /**
     * The endpoint's message protocol: the messages below, and the lane events of
     * {@link LaneProtocol}, which transports cause (through the endpoint's listener).
     */
    public sealed interface Command permits Connect, DrainSubmissions, Close, Abort, ProbeLanes, Connected,
            DrainFenceQueue,
            ReplayDone, KeepaliveTick, StrongFenceDone, Retire, LaneProtocol.Answer, LaneFlushFailed,
            LaneReady, LaneFailed, LaneReplaced, LaneRecovered, LaneAdded {
    }

    /**
     * The first message: connect the lanes, and tell {@code replyTo} when the endpoint is ready or
     * could not connect. A message rather than the actor's initial behavior's arguments, which the
     * actor system keeps for the actor's life (with the reply's promise and its answer).
     *
     * @param lanes starts the transport connection
     * @param replyTo told the result
     */
    public record Connect(Supplier<CompletionStage<List<LaneConnection>>> lanes, ActorRef<ConnectResult> replyTo)
            implements Command {
    }

    /** Take the queued submissions (sent by the facade, at most one in the mailbox at a time). */
    public record DrainSubmissions() implements Command {
        /** The only instance. */
        public static final DrainSubmissions INSTANCE = new DrainSubmissions();
    }

    /**
     * Close after the flush that the facade queued behind every earlier operation.
     *
     * @param replyTo told when closed
     */
    public record Close(ActorRef<Done> replyTo) implements Command {
    }

    /**
     * Fail at once, without a flush: the peer is known to be gone.
     *
     * @param reason why, for the errors' messages
     */
    public record Abort(String reason) implements Command {
    }

    /** A hint that the peer may be unreachable: probe every lane now instead of when idle. */
    public record ProbeLanes() implements Command {
        /** The only instance. */
        public static final ProbeLanes INSTANCE = new ProbeLanes();
    }

    /** The transport connected the lanes ({@code lanes}), or failed to ({@code error}). */
    record Connected(List<LaneConnection> lanes, Throwable error) implements Command {
    }

    /** Self-message: drain the fence queue (deduplicated). */
    record DrainFenceQueue() implements Command {
        static final DrainFenceQueue INSTANCE = new DrainFenceQueue();
    }

    /** Self-message: the replay after a reconfiguration is over; flushes and fences may start again. */
    record ReplayDone() implements Command {
        static final ReplayDone INSTANCE = new ReplayDone();
    }

    /** Timer: probe idle lanes, fail lanes whose probe is overdue. */
    record KeepaliveTick() implements Command {
        static final KeepaliveTick INSTANCE = new KeepaliveTick();
    }

    /**
     * Timer, once the endpoint ended (closed or failed): the actor stops. It lingers until then
     * (connect-timeout) to close what a connect or a lane replacement still hands it.
     */
    record Retire() implements Command {
        static final Retire INSTANCE = new Retire();
    }

    /** Self-message: the in-flight strong fence's lane flushes all completed. */
    record StrongFenceDone() implements Command {
        static final StrongFenceDone INSTANCE = new StrongFenceDone();
    }

    /**
     * Reply to whoever asked for the endpoint.
     *
     * @param endpoint the ready endpoint, or null
     * @param error why it could not be connected, or null
     */
    public record ConnectResult(Endpoint endpoint, FencelineException error) {
    }
}
