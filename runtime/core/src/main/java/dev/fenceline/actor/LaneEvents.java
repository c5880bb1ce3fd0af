package dev.fenceline.actor;

import dev.fenceline.LaneEvent;
import dev.fenceline.WorkerAddress;
import dev.fenceline.jfr.ConnectEvent;
import dev.fenceline.jfr.EndpointFailureEvent;
import dev.fenceline.jfr.LaneChangeEvent;
import dev.fenceline.jfr.LaneFailoverEvent;
import dev.fenceline.jfr.ReplayEvent;
import dev.fenceline.jfr.StrongFenceEvent;

/**
 * What an endpoint tells the world about its lanes: each event goes to its worker's listeners
 * (through the worker's {@link Sink}, which delivers on the dispatcher) and to JFR. Called by the
 * endpoint actor after it applied the change; never blocks.
 */
final class LaneEvents {
    /** Where a worker's listeners hear its endpoints' events. */
    @FunctionalInterface
    interface Sink {
        /** @param event an event, handed over (the sink must not call a listener on this thread) */
        void publish(LaneEvent event);
    }

    /** Nobody listens (tests, and a channel made without a worker). */
    static final Sink NONE = e -> { };

    private final String endpoint;
    private final WorkerAddress peer;
    private final Sink sink;

    LaneEvents(String endpoint, WorkerAddress peer, Sink sink) {
        this.endpoint = endpoint;
        this.peer = peer;
        this.sink = sink;
    }

    void failedOver(int lane, String transport, Throwable cause, int liveLeft) {
        String why = String.valueOf(cause);
        LaneFailoverEvent e = new LaneFailoverEvent();
        if (e.shouldCommit()) {
            e.endpoint = endpoint;
            e.lane = lane;
            e.transport = transport;
            e.cause = why;
            e.liveLanes = liveLeft;
            e.commit();
        }
        sink.publish(new LaneEvent.LaneFailedOver(endpoint, peer, lane, transport, why));
    }

    void replaced(int lane, String transport) {
        changed(lane, "replaced", transport);
        sink.publish(new LaneEvent.LaneReplaced(endpoint, peer, lane, transport));
    }

    void recovered(int lane, String transport) {
        changed(lane, "recovered", transport);
        sink.publish(new LaneEvent.LaneRecovered(endpoint, peer, lane, transport));
    }

    void added(int lane, String transport) {
        changed(lane, "added", transport);
        sink.publish(new LaneEvent.LaneAdded(endpoint, peer, lane, transport));
    }

    private void changed(int lane, String change, String transport) {
        LaneChangeEvent e = new LaneChangeEvent();
        if (e.shouldCommit()) {
            e.endpoint = endpoint;
            e.lane = lane;
            e.change = change;
            e.transport = transport;
            e.commit();
        }
    }

    void endpointFailed(Throwable cause) {
        String why = String.valueOf(cause.getMessage());
        EndpointFailureEvent e = new EndpointFailureEvent();
        if (e.shouldCommit()) {
            e.endpoint = endpoint;
            e.cause = why;
            e.commit();
        }
        sink.publish(new LaneEvent.EndpointFailed(endpoint, peer, why));
    }

    void strongFence(long epoch, long nanos) {
        StrongFenceEvent e = new StrongFenceEvent();
        if (e.shouldCommit()) {
            e.endpoint = endpoint;
            e.epoch = epoch;
            e.took = nanos;
            e.commit();
        }
    }

    void replay(int restarted, int dropped) {
        ReplayEvent e = new ReplayEvent();
        if (e.shouldCommit()) {
            e.endpoint = endpoint;
            e.restarted = restarted;
            e.dropped = dropped;
            e.commit();
        }
    }

    /** @return a connect's event, begun now; {@link #connected} ends it */
    ConnectEvent connecting() {
        ConnectEvent e = new ConnectEvent();
        e.begin();
        return e;
    }

    void connected(ConnectEvent e, int lanes, Throwable failure) {
        e.end();
        if (e.shouldCommit()) {
            e.endpoint = endpoint;
            e.peer = peer.name();
            e.lanes = lanes;
            e.failure = failure == null ? null : failure.toString();
            e.commit();
        }
    }
}
