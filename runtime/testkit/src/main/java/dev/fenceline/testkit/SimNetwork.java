package dev.fenceline.testkit;

import dev.fenceline.Endpoint;
import dev.fenceline.Fenceline;
import dev.fenceline.LaneInfo;
import dev.fenceline.LaneType;
import dev.fenceline.testkit.sim.SimFaults;
import dev.fenceline.testkit.sim.SimTransportProvider;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.WeakHashMap;

/**
 * Fault injection for endpoints on the {@code sim} transport: fail, replace, recover and add lanes,
 * and change a lane's delays, while traffic flows. Every change reaches the endpoint as the same
 * message a real transport would send, in order with the lane's deliveries.
 */
public final class SimNetwork {
    /** Connection ids last seen per endpoint slot, so a failed slot can be recovered. */
    private final Map<Endpoint, long[]> seen = new WeakHashMap<>();

    private SimNetwork() {
    }

    /**
     * @param fenceline a runtime with the sim transport enabled
     * @return its fault injector
     * @throws IllegalArgumentException if the runtime does not use the sim transport
     */
    public static SimNetwork of(Fenceline fenceline) {
        if (!fenceline.transports().contains(SimTransportProvider.NAME)) {
            throw new IllegalArgumentException("SimNetwork needs fenceline.transports to include sim (it is "
                    + fenceline.transports() + ")");
        }
        return new SimNetwork();
    }

    private synchronized long connection(Endpoint ep, int laneIndex, boolean mayBeFailed) {
        List<LaneInfo> lanes = ep.lanes();
        long[] ids = seen.computeIfAbsent(ep, k -> new long[64]);
        for (LaneInfo l : lanes) {
            if (l.live()) {
                ids[l.index()] = l.connectionId();
            }
        }
        if (laneIndex < 0 || laneIndex >= lanes.size()) {
            throw new IllegalArgumentException("lane " + laneIndex + " outside [0, " + lanes.size() + ") of " + ep);
        }
        if (!lanes.get(laneIndex).live() && !mayBeFailed) {
            throw new IllegalStateException("lane " + laneIndex + " of " + ep + " is not live");
        }
        return ids[laneIndex];
    }

    /**
     * Fails a lane, as a dead link would: its undelivered operations are lost, acknowledgements on
     * their way back are lost, and the endpoint is told.
     *
     * @param ep the endpoint
     * @param laneIndex the lane
     */
    public void failLane(Endpoint ep, int laneIndex) {
        SimFaults.fail(connection(ep, laneIndex, false), "lane " + laneIndex + " of " + ep + " failed by SimNetwork");
    }

    /**
     * Turns a lane into a black hole, as a link that dies without a reset: operations and
     * acknowledgements vanish and no failure is reported. Only the endpoint's keepalive can find
     * out (then the lane fails over like any failed lane).
     *
     * @param ep the endpoint
     * @param laneIndex the lane
     */
    public void silenceLane(Endpoint ep, int laneIndex) {
        SimFaults.silence(connection(ep, laneIndex, false));
    }

    /**
     * Puts a new connection behind the same lane index (what a transport does when it reconnects
     * transparently); operations in flight on the old one are lost.
     *
     * @param ep the endpoint
     * @param laneIndex the lane
     */
    public void replaceLane(Endpoint ep, int laneIndex) {
        SimFaults.replace(connection(ep, laneIndex, false));
    }

    /**
     * Reconnects a failed lane.
     *
     * @param ep the endpoint
     * @param laneIndex a failed lane that this SimNetwork has seen live
     */
    public void recoverLane(Endpoint ep, int laneIndex) {
        long id = connection(ep, laneIndex, true);
        if (ep.lanes().get(laneIndex).live()) {
            throw new IllegalStateException("lane " + laneIndex + " of " + ep + " is live; only failed lanes recover");
        }
        if (id == 0) {
            throw new IllegalStateException("lane " + laneIndex + " of " + ep + " was never seen live by this"
                    + " SimNetwork");
        }
        SimFaults.recover(id);
    }

    /**
     * Opens another lane to the endpoint's peer.
     *
     * @param ep the endpoint
     * @param types what the new lane carries
     */
    public void addLane(Endpoint ep, Set<LaneType> types) {
        List<LaneInfo> lanes = ep.lanes();
        LaneInfo any = lanes.stream().filter(LaneInfo::live).findFirst()
                .orElseThrow(() -> new IllegalStateException(ep + " has no live lane to add one beside"));
        SimFaults.add(any.connectionId(), types, lanes.size());
    }

    /**
     * Loses a lane's keepalive probes while its data still flows, so keepalive declares a healthy
     * but idle lane dead: for testing how a service copes with a false failure detection.
     *
     * @param ep the endpoint
     * @param laneIndex the lane
     */
    public void dropKeepalives(Endpoint ep, int laneIndex) {
        SimFaults.dropKeepalives(connection(ep, laneIndex, false));
    }

    /**
     * Partitions two workers: nothing between them is delivered or acknowledged, in either
     * direction, and nothing is reported; keepalive finds out. {@link #heal} ends it.
     *
     * @param a one worker's address
     * @param b the other's
     */
    public void partition(dev.fenceline.WorkerAddress a, dev.fenceline.WorkerAddress b) {
        SimFaults.partition(a.workerId(), b.workerId(), true);
    }

    /**
     * Ends a partition; what was sent during it stays lost.
     *
     * @param a one worker's address
     * @param b the other's
     */
    public void heal(dev.fenceline.WorkerAddress a, dev.fenceline.WorkerAddress b) {
        SimFaults.partition(a.workerId(), b.workerId(), false);
    }

    /**
     * Breaks exactly-once at a target on purpose: its sim transport applies an operation that is
     * re-sent after a lane failure again, as a transport without deduplication would. For proving
     * that a test catches double-applied atomics; never needed otherwise.
     *
     * @param target the target worker's address (for example an endpoint's {@code peer()})
     */
    public void breakDeduplication(dev.fenceline.WorkerAddress target) {
        SimFaults.breakDeduplication(target.workerId());
    }

    /**
     * Changes a lane's delivery delays from now on.
     *
     * @param ep the endpoint
     * @param laneIndex the lane
     * @param min the shortest delay
     * @param max the longest delay
     */
    public void setDelay(Endpoint ep, int laneIndex, Duration min, Duration max) {
        SimFaults.delay(connection(ep, laneIndex, false), min, max);
    }
}
