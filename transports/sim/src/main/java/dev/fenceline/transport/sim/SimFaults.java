package dev.fenceline.transport.sim;

import dev.fenceline.EndpointFailedException;
import dev.fenceline.LaneType;
import java.time.Duration;
import java.util.Set;

/** Fault injection on sim lanes by connection id; the public face is {@code SimNetwork}. */
public final class SimFaults {
    private SimFaults() {
    }

    private static SimLane lane(long connectionId) {
        SimLane l = SimLanes.find(connectionId);
        if (l == null) {
            throw new IllegalArgumentException("no open sim lane with connection id " + connectionId);
        }
        return l;
    }

    /**
     * @param connectionId the lane's connection
     * @param why the failure's message
     */
    public static void fail(long connectionId, String why) {
        lane(connectionId).fail(new EndpointFailedException("sim: " + why));
    }

    /**
     * @param connectionId the lane's connection, whose target stops taking its deliveries, flushes
     *     and probes for {@code heldFor}, then takes them all, even if the endpoint gave the lane up
     *     meanwhile (unless it revoked them: revocable lanes)
     * @param heldFor how long
     */
    public static void stall(long connectionId, Duration heldFor) {
        if (heldFor.isNegative()) {
            throw new IllegalArgumentException("stall of " + heldFor + ": expected a duration >= 0");
        }
        lane(connectionId).stall(heldFor);
    }

    /**
     * @param connectionId the lane's connection, which from now on delivers and acknowledges nothing
     *     and reports no failure
     */
    public static void silence(long connectionId) {
        lane(connectionId).silence();
    }

    /**
     * Puts a new connection behind the lane's slot; the old one stops delivering.
     *
     * @param connectionId the lane's connection
     * @return the new connection's id
     */
    public static long replace(long connectionId) {
        SimLane old = lane(connectionId);
        SimLane next = old.origin().newLane(old.index(), old.spec(), old.peer());
        old.replaceWith(next);
        return next.id();
    }

    /**
     * Reconnects a failed lane: a new connection in the same slot, with the failed lane's spec.
     *
     * @param failedConnectionId the failed lane's connection (still known to the sim)
     * @return the new connection's id
     */
    public static long recover(long failedConnectionId) {
        SimLane old = SimLanes.findOpenOrClosed(failedConnectionId);
        if (old == null) {
            throw new IllegalArgumentException("no sim lane with connection id " + failedConnectionId);
        }
        SimLane next = old.origin().newLane(old.index(), old.spec(), old.peer());
        old.reportOnFabric(l -> l.onRecovered(next)); // in order with an earlier failure report
        return next.id();
    }

    /**
     * Opens another lane for the endpoint that owns {@code anyConnectionId}.
     *
     * @param anyConnectionId a connection of the endpoint
     * @param types the new lane's types
     * @param index the slot the new lane will get
     * @return the new connection's id
     */
    public static long add(long anyConnectionId, Set<LaneType> types, int index) {
        SimLane any = lane(anyConnectionId);
        SimLaneSpec spec = new SimLaneSpec(types, any.spec().minDelay(), any.spec().maxDelay(),
                any.spec().deduplicates(), any.spec().revocable());
        SimLane next = any.origin().newLane(index, spec, any.peer());
        any.reportOnFabric(l -> l.onLaneAdded(next)); // in order with earlier reports
        return next.id();
    }

    /**
     * @param connectionId a connection the sim made
     * @return whether it is still open (its endpoint has not closed it, for instance as a change it refused)
     */
    public static boolean isOpen(long connectionId) {
        SimLane l = SimLanes.find(connectionId);
        return l != null && l.open();
    }

    /**
     * @param connectionId the lane's connection, whose keepalive probes are lost from now on
     */
    public static void dropKeepalives(long connectionId) {
        lane(connectionId).dropKeepalives();
    }

    /**
     * @param a one worker
     * @param b another
     * @param cut true to partition them (nothing is delivered or acknowledged between them, and
     *     nothing is reported), false to heal
     */
    public static void partition(java.util.UUID a, java.util.UUID b, boolean cut) {
        SimTransport.partition(a, b, cut);
    }

    /**
     * @param targetWorker a worker whose sim transport from now on applies re-sent operations again
     */
    public static void breakDeduplication(java.util.UUID targetWorker) {
        SimTransport.breakDeduplication(targetWorker);
    }

    /**
     * @param connectionId the lane's connection
     * @param min shortest delivery delay from now on
     * @param max longest delivery delay from now on
     */
    public static void delay(long connectionId, Duration min, Duration max) {
        if (min.isNegative() || max.compareTo(min) < 0) {
            throw new IllegalArgumentException("delays [" + min + ", " + max + "] need 0 <= min <= max");
        }
        lane(connectionId).setDelay(min.toNanos(), max.toNanos());
    }
}
