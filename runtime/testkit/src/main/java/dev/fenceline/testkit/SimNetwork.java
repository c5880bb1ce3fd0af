package dev.fenceline.testkit;

import dev.fenceline.Endpoint;
import dev.fenceline.Fenceline;
import dev.fenceline.LaneInfo;
import dev.fenceline.LaneType;
import dev.fenceline.transport.sim.SimFaults;
import dev.fenceline.transport.sim.SimTransportProvider;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.WeakHashMap;

/**
 * Fault injection for endpoints on the {@code sim} transport: fail, replace, recover and add lanes,
 * and change a lane's delays, while traffic flows. Every change reaches the endpoint as the same
 * message a real transport would send, in order with the lane's deliveries, and calls take effect in
 * the order they are made: {@code failLane} then at once {@code recoverLane} (or {@code replaceLane})
 * of the same lane works, although the endpoint has not applied the failure yet when the second call
 * is made.
 */
public final class SimNetwork {
    /**
     * What fault injection did to each endpoint's slots, ahead of what the endpoint has applied:
     * its published lane table lags by the messages in its mailbox, so a call made right after
     * another (fail, then recover) is checked against what the earlier call did, and takes effect
     * after it. An entry is dropped once the endpoint's table shows it. Shared by every SimNetwork.
     */
    private static final Map<Endpoint, Slots> SLOTS = new WeakHashMap<>();

    /** One endpoint's slots as fault injection left them, and the last connection seen live in each. */
    private static final class Slots {
        final long[] lastLive = new long[64];
        final long[] connection = new long[64];
        /** 0: no pending change; 1: live (replaced, recovered, added); -1: failed. */
        final byte[] pending = new byte[64];
        /**
         * The endpoint closed the connection a pending change put in the slot (it had moved on): its
         * table is the truth again, and a fault finding the slot failed there has nothing to act on.
         */
        final boolean[] refused = new boolean[64];
        int size;
    }

    /** A slot as the next call sees it. */
    private record Slot(long connection, boolean live) {
    }

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

    /** Brings an endpoint's record up to date with its published table; call under the class lock. */
    private static Slots slots(Endpoint ep) {
        Slots s = SLOTS.computeIfAbsent(ep, k -> new Slots());
        List<LaneInfo> lanes = ep.lanes();
        s.size = Math.max(s.size, lanes.size());
        for (LaneInfo l : lanes) {
            int i = l.index();
            if (l.live()) {
                s.lastLive[i] = l.connectionId();
                s.refused[i] = false; // live again in the table: a fault has something to act on
            }
            boolean shown = s.pending[i] > 0 ? l.live() && l.connectionId() == s.connection[i]
                    : s.pending[i] < 0 && !l.live();
            if (shown) {
                s.pending[i] = 0; // the endpoint applied it: its table is the truth again
            }
        }
        for (int i = 0; i < s.size; i++) {
            if (s.pending[i] > 0 && !SimFaults.isOpen(s.connection[i])) {
                s.pending[i] = 0; // the endpoint refused the new connection (and closed it)
                s.refused[i] = true;
            }
        }
        return s;
    }

    private static Slot slot(Slots s, Endpoint ep, int laneIndex) {
        if (laneIndex < 0 || laneIndex >= s.size) {
            throw new IllegalArgumentException("lane " + laneIndex + " outside [0, " + s.size + ") of " + ep);
        }
        if (s.pending[laneIndex] != 0) {
            return new Slot(s.connection[laneIndex], s.pending[laneIndex] > 0);
        }
        List<LaneInfo> lanes = ep.lanes();
        boolean live = laneIndex < lanes.size() && lanes.get(laneIndex).live();
        return new Slot(s.lastLive[laneIndex], live);
    }

    /**
     * @param failedIsNothing whether a failed slot is an answer (0) rather than the caller's mistake
     * @return the live connection in the slot, as the previous calls left it, or 0 if it is failed
     *     and that is no mistake
     */
    private static long live(Endpoint ep, int laneIndex, boolean failedIsNothing) {
        synchronized (SLOTS) {
            Slots s = slots(ep);
            Slot slot = slot(s, ep, laneIndex);
            if (slot.live()) {
                return slot.connection();
            }
            if (failedIsNothing || s.refused[laneIndex]) {
                return 0;
            }
            throw new IllegalStateException("lane " + laneIndex + " of " + ep + " is not live");
        }
    }

    /**
     * Applies a fault to the slot's live connection. On the real-time fabric the endpoint may close
     * a connection an earlier call made before this call reaches it (a replacement for a slot that
     * had moved on, a recovery of a slot still live): then the endpoint's table is the truth again,
     * and the fault goes to the connection it shows, once that one is open (at most 5 s of real
     * time: the table may lag the close), or nowhere if it shows the slot failed. On virtual time
     * nothing closes behind a call's back.
     *
     * @return the connection the fault went to, or 0 if the slot turned out failed
     */
    private static long onLive(Endpoint ep, int laneIndex, java.util.function.LongConsumer fault) {
        return onLive(ep, laneIndex, fault, false);
    }

    /**
     * @param failedIsNothing whether a slot found failed (the endpoint's table may have moved on
     *     since the caller looked) returns 0 rather than throwing
     */
    private static long onLive(Endpoint ep, int laneIndex, java.util.function.LongConsumer fault,
            boolean failedIsNothing) {
        long deadline = System.nanoTime() + java.util.concurrent.TimeUnit.SECONDS.toNanos(5);
        while (true) {
            // one look decides both whether the slot is live and which connection it holds
            long c = live(ep, laneIndex, failedIsNothing);
            if (c == 0) {
                return 0; // failed already: the fault has nothing to act on
            }
            try {
                fault.accept(c);
                return c;
            } catch (IllegalArgumentException closed) {
                if (SimFaults.isOpen(c) || System.nanoTime() - deadline > 0) {
                    throw closed;
                }
                synchronized (SLOTS) {
                    Slots s = slots(ep);
                    s.pending[laneIndex] = 0;
                    s.refused[laneIndex] = true;
                }
                Thread.onSpinWait();
            }
        }
    }

    private static void pending(Endpoint ep, int laneIndex, long connection, boolean live) {
        synchronized (SLOTS) {
            Slots s = slots(ep);
            s.connection[laneIndex] = connection;
            s.pending[laneIndex] = (byte) (live ? 1 : -1);
            s.refused[laneIndex] = false;
            s.size = Math.max(s.size, laneIndex + 1);
        }
    }

    /**
     * Fails a lane, as a dead link would: its undelivered operations are lost, acknowledgements on
     * their way back are lost, and the endpoint is told.
     *
     * @param ep the endpoint
     * @param laneIndex the lane
     */
    public void failLane(Endpoint ep, int laneIndex) {
        long c = onLive(ep, laneIndex, id -> SimFaults.fail(id, "lane " + laneIndex + " of " + ep
                + " failed by SimNetwork"));
        if (c != 0) {
            pending(ep, laneIndex, c, false);
        }
    }

    /**
     * Stalls a lane's target, as a paused process or a full inbox would: from now on it takes
     * nothing the lane delivers (operations, flushes, keepalive probes wait in order), until
     * {@code heldFor} has passed; then it takes everything that waited, even if the endpoint gave
     * the lane up meanwhile (its keepalive did, or {@link #failLane}). Copies the endpoint sent
     * again elsewhere in between are what the runtime must keep from being applied twice or late:
     * a revocable lane (the default; {@code revocable = off} in the lane's configuration) lets the
     * endpoint withdraw what waits, as shm does; one that is not models a socket buffer, and its
     * target's exactly-once window must recognize the late copies.
     *
     * @param ep the endpoint
     * @param laneIndex the lane
     * @param heldFor how long the target stays stalled (virtual time under the deterministic simulation)
     */
    public void stallLane(Endpoint ep, int laneIndex, Duration heldFor) {
        onLive(ep, laneIndex, id -> SimFaults.stall(id, heldFor));
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
        onLive(ep, laneIndex, SimFaults::silence);
    }

    /**
     * Puts a new connection behind the same lane index (what a transport does when it reconnects
     * transparently); operations in flight on the old one are lost. A lane failed by an earlier call
     * gets its new connection as a recovery.
     *
     * @param ep the endpoint
     * @param laneIndex the lane
     */
    public void replaceLane(Endpoint ep, int laneIndex) {
        Slot slot;
        synchronized (SLOTS) {
            slot = slot(slots(ep), ep, laneIndex);
        }
        if (!slot.live()) {
            recoverLane(ep, laneIndex);
            return;
        }
        long[] next = new long[1];
        if (onLive(ep, laneIndex, id -> next[0] = SimFaults.replace(id), true) == 0) {
            recoverLane(ep, laneIndex); // it failed meanwhile: replacing a failed slot is recovering it
            return;
        }
        pending(ep, laneIndex, next[0], true);
    }

    /**
     * Reconnects a failed lane.
     *
     * @param ep the endpoint
     * @param laneIndex a failed lane that this SimNetwork has seen live
     */
    public void recoverLane(Endpoint ep, int laneIndex) {
        Slot slot;
        synchronized (SLOTS) {
            slot = slot(slots(ep), ep, laneIndex);
        }
        if (slot.live()) {
            throw new IllegalStateException("lane " + laneIndex + " of " + ep + " is live; only failed lanes recover");
        }
        if (slot.connection() == 0) {
            throw new IllegalStateException("lane " + laneIndex + " of " + ep + " was never seen live");
        }
        pending(ep, laneIndex, SimFaults.recover(slot.connection()), true);
    }

    /**
     * Opens another lane to the endpoint's peer.
     *
     * @param ep the endpoint
     * @param types what the new lane carries
     */
    public void addLane(Endpoint ep, Set<LaneType> types) {
        long any = 0;
        int slot;
        synchronized (SLOTS) {
            Slots s = slots(ep);
            slot = s.size;
            for (int i = 0; i < s.size && any == 0; i++) {
                Slot l = slot(s, ep, i);
                any = l.live() ? l.connection() : 0;
            }
        }
        if (any == 0) {
            throw new IllegalStateException(ep + " has no live lane to add one beside");
        }
        pending(ep, slot, SimFaults.add(any, types, slot), true);
    }

    /**
     * Loses a lane's keepalive probes while its data still flows, so keepalive declares a healthy
     * but idle lane dead: for testing how a service copes with a false failure detection.
     *
     * @param ep the endpoint
     * @param laneIndex the lane
     */
    public void dropKeepalives(Endpoint ep, int laneIndex) {
        onLive(ep, laneIndex, SimFaults::dropKeepalives);
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
     * Ends a partition. What was sent during it stays lost, and a lane that lost something (a
     * delivery, an answer, a flush) says nothing from then on, as no reliable connection goes on past
     * a hole: keepalive gives it up, and the endpoint restarts what it did not finish.
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
        onLive(ep, laneIndex, id -> SimFaults.delay(id, min, max));
    }
}
