package dev.fenceline;

/**
 * Something that happened to an endpoint's lanes, as a service watching its links sees it: a lane
 * failed and the endpoint went on without it, a transport put a new connection behind a lane,
 * reconnected a failed one or added one, or the endpoint itself failed. Delivered to a
 * {@link LaneEventListener} after the endpoint applied it.
 */
public sealed interface LaneEvent {
    /** @return the endpoint's name */
    String endpoint();

    /** @return the worker the endpoint leads to */
    WorkerAddress peer();

    /**
     * A lane failed; the endpoint restarted what it had not finished on the others.
     *
     * @param endpoint the endpoint's name
     * @param peer the worker it leads to
     * @param lane the slot
     * @param transport the failed connection's transport
     * @param cause why, as the transport or keepalive said
     */
    record LaneFailedOver(String endpoint, WorkerAddress peer, int lane, String transport, String cause)
            implements LaneEvent {
    }

    /**
     * A transport put a new connection behind a lane (a transparent reconnect).
     *
     * @param endpoint the endpoint's name
     * @param peer the worker it leads to
     * @param lane the slot
     * @param transport the new connection's transport
     */
    record LaneReplaced(String endpoint, WorkerAddress peer, int lane, String transport) implements LaneEvent {
    }

    /**
     * A failed lane is connected again.
     *
     * @param endpoint the endpoint's name
     * @param peer the worker it leads to
     * @param lane the slot
     * @param transport the new connection's transport
     */
    record LaneRecovered(String endpoint, WorkerAddress peer, int lane, String transport) implements LaneEvent {
    }

    /**
     * Another lane to the same peer.
     *
     * @param endpoint the endpoint's name
     * @param peer the worker it leads to
     * @param lane the new slot
     * @param transport its transport
     */
    record LaneAdded(String endpoint, WorkerAddress peer, int lane, String transport) implements LaneEvent {
    }

    /**
     * The endpoint failed (its last lane, or a lane in an error mode without failover): every
     * request it held has completed with an error, and it takes no more.
     *
     * @param endpoint the endpoint's name
     * @param peer the worker it leads to
     * @param cause why
     */
    record EndpointFailed(String endpoint, WorkerAddress peer, String cause) implements LaneEvent {
    }
}
