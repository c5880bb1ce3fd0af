package dev.fenceline.actor;

import dev.fenceline.FencelineException;
import dev.fenceline.spi.LaneConnection;
import dev.fenceline.spi.LaneListener;
import org.apache.pekko.actor.typed.ActorRef;

/**
 * The lane events an endpoint actor receives: what its lanes' transports report (completions,
 * flushes, room, failures) and the lane-table changes they cause (replacement, recovery, addition).
 * Transports never hold the endpoint: they call a {@link Listener}, which only sends these.
 */
public final class LaneProtocol {
    private LaneProtocol() {
    }

    /** What a lane answers about the work it was given: operations done or failed, flushes done. */
    public sealed interface Answer extends EndpointProtocol.Command permits OpCompleted, OpsCompleted, OpFailed,
            LaneFlushed {
        /** @return the lane index */
        int lane();

        /** @return the connection that answers */
        long connectionId();
    }

    /**
     * A lane finished an operation.
     *
     * @param lane the lane index
     * @param connectionId the connection it was posted on
     * @param token the operation's token
     * @param value the fetched value, or 0
     */
    public record OpCompleted(int lane, long connectionId, long token, long value) implements Answer {
    }

    /**
     * Several operations completed, reported in one message.
     *
     * @param lane the lane index
     * @param connectionId the connection that completed them
     * @param tokens their tokens (this message's own copy)
     * @param values their fetched values
     */
    public record OpsCompleted(int lane, long connectionId, long[] tokens, long[] values) implements Answer {
    }

    /**
     * An operation failed at the lane or the target.
     *
     * @param lane the lane index
     * @param connectionId the connection it was posted on
     * @param token the operation's token
     * @param error the typed cause
     */
    public record OpFailed(int lane, long connectionId, long token, FencelineException error) implements Answer {
    }

    /**
     * A lane flush completed.
     *
     * @param lane the lane index
     * @param connectionId the connection
     * @param token the flush's token
     */
    public record LaneFlushed(int lane, long connectionId, long token) implements Answer {
    }

    /**
     * A lane flush failed.
     *
     * @param lane the lane index
     * @param connectionId the connection
     * @param token the flush's token
     * @param error why
     */
    public record LaneFlushFailed(int lane, long connectionId, long token, FencelineException error)
            implements EndpointProtocol.Command {
    }

    /**
     * A lane has room again.
     *
     * @param lane the lane index
     * @param connectionId the connection
     */
    public record LaneReady(int lane, long connectionId) implements EndpointProtocol.Command {
    }

    /**
     * A lane's connection died.
     *
     * @param lane the lane index
     * @param connectionId the connection
     * @param cause why
     */
    public record LaneFailed(int lane, long connectionId, Throwable cause) implements EndpointProtocol.Command {
    }

    /**
     * The transport put a new connection behind a lane's slot.
     *
     * @param lane the lane index
     * @param oldConnectionId the connection being replaced
     * @param connection the new connection
     */
    public record LaneReplaced(int lane, long oldConnectionId, LaneConnection connection) implements EndpointProtocol.Command {
    }

    /**
     * A failed lane is connected again.
     *
     * @param lane the lane index
     * @param connection the new connection
     */
    public record LaneRecovered(int lane, LaneConnection connection) implements EndpointProtocol.Command {
    }

    /**
     * Another lane to the same peer.
     *
     * @param connection the new lane's connection
     */
    public record LaneAdded(LaneConnection connection) implements EndpointProtocol.Command {
    }

    /**
     * Turns one lane's events into messages to its endpoint; holds no endpoint state, so transports
     * may call it from any thread.
     *
     * @param endpoint the endpoint actor
     * @param lane the lane's slot
     * @param connectionId the connection it listens to
     */
    record Listener(ActorRef<EndpointProtocol.Command> endpoint, int lane, long connectionId) implements LaneListener {
        @Override
        public void onCompleted(long token, long value) {
            endpoint.tell(new OpCompleted(lane, connectionId, token, value));
        }

        @Override
        public void onCompletedBatch(long[] tokens, long[] values, int count) {
            if (count == 1) {
                onCompleted(tokens[0], values[0]);
            } else if (count > 1) {
                endpoint.tell(new OpsCompleted(lane, connectionId, java.util.Arrays.copyOf(tokens, count),
                        java.util.Arrays.copyOf(values, count)));
            }
        }

        @Override
        public void onFailed(long token, FencelineException error) {
            endpoint.tell(new OpFailed(lane, connectionId, token, error));
        }

        @Override
        public void onFlushed(long token) {
            endpoint.tell(new LaneFlushed(lane, connectionId, token));
        }

        @Override
        public void onFlushFailed(long token, FencelineException error) {
            endpoint.tell(new LaneFlushFailed(lane, connectionId, token, error));
        }

        @Override
        public void onReady() {
            endpoint.tell(new LaneReady(lane, connectionId));
        }

        @Override
        public void onLaneFailed(Throwable cause) {
            endpoint.tell(new LaneFailed(lane, connectionId, cause));
        }

        @Override
        public void onReplaced(LaneConnection replacement) {
            endpoint.tell(new LaneReplaced(lane, connectionId, replacement));
        }

        @Override
        public void onRecovered(LaneConnection connection) {
            endpoint.tell(new LaneRecovered(lane, connection));
        }

        @Override
        public void onLaneAdded(LaneConnection connection) {
            endpoint.tell(new LaneAdded(connection));
        }
    }
}
