package dev.fenceline.transport.shm;

import dev.fenceline.EndpointFailedException;
import java.time.Duration;
import java.util.Collection;
import java.util.Collections;
import java.util.IdentityHashMap;
import java.util.Set;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * Peer processes the transport actor found stopped (a stall: keepalive's verdict, for the ring lanes
 * only, since cma reaches a stopped process), and peer workers found gone: closed, or their process
 * dead (their lanes fail, cma's too, and the target forgets their connections). The actor reports
 * them from its thread; the polling thread, which owns the lanes' answers, acts on them. A lane
 * given up just as its peer is found gone may start to wait for answers after the first look, so
 * gone peers are swept again at each housekeeping while some lane to them is still known.
 */
final class ShmPeerLoss {
    private static final org.slf4j.Logger LOG = org.slf4j.LoggerFactory.getLogger(ShmPeerLoss.class);

    private final String workerName;
    /** The transport's ring lanes (a live view). */
    private final Collection<ShmLane> lanes;
    /** The transport's cma lanes (a live, concurrent set). */
    private final Set<CmaLane> cmaLanes;
    private final ShmTarget target;
    private final Runnable doorbell;
    /** Peer processes found standing still, for the polling thread to fail their ring lanes. */
    private final ConcurrentLinkedQueue<ShmTransportActor.PeerStalled> stalls = new ConcurrentLinkedQueue<>();
    /** Peer workers found gone (closed, or their process dead), for the polling thread to act on. */
    private final ConcurrentLinkedQueue<Inbox> deaths = new ConcurrentLinkedQueue<>();
    /** Polling thread: peers found gone whose lanes may still owe answers (see {@link #sweep}). */
    private final Set<Inbox> gone = Collections.newSetFromMap(new IdentityHashMap<>());
    /** Set by housekeeping: the polling thread looks at {@link #gone} again. */
    private final AtomicBoolean sweepWanted = new AtomicBoolean();

    /**
     * @param workerName the worker's name, for the log
     * @param lanes the transport's ring lanes (a live view)
     * @param cmaLanes the transport's cma lanes (a live, concurrent set)
     * @param target the target side, which forgets a gone peer's connections
     * @param doorbell wakes the polling thread
     */
    ShmPeerLoss(String workerName, Collection<ShmLane> lanes, Set<CmaLane> cmaLanes, ShmTarget target,
            Runnable doorbell) {
        this.workerName = workerName;
        this.lanes = lanes;
        this.cmaLanes = cmaLanes;
        this.target = target;
        this.doorbell = doorbell;
    }

    /** Transport actor: the polling thread fails the peer's ring lanes. */
    void stalled(Inbox peer, Duration timeout) {
        stalls.add(new ShmTransportActor.PeerStalled(peer, timeout));
        doorbell.run();
    }

    /** Transport actor: the polling thread fails the peer worker's lanes and forgets its connections. */
    void gone(Inbox peer) {
        deaths.add(peer);
        doorbell.run();
    }

    /** Housekeeping: the polling thread sweeps the gone peers' lanes again. */
    void sweepSoon() {
        sweepWanted.set(true);
    }

    /** @return whether the polling thread has something of this to do */
    boolean pending() {
        return !stalls.isEmpty() || !deaths.isEmpty() || sweepWanted.get();
    }

    /** @return polling thread: how many stalls it acted on */
    int serveStalls() {
        int n = 0;
        for (ShmTransportActor.PeerStalled s; (s = stalls.poll()) != null; n++) {
            for (ShmLane l : lanes) {
                if (l.peer == s.peer() && l.isLive()) {
                    l.fail(new EndpointFailedException("keepalive: shm peer process " + s.peer().pid
                            + " has not run for " + s.timeout() + " (stopped or paused)"));
                }
            }
        }
        return n;
    }

    /** @return polling thread: how many gone peers it acted on */
    int serveDeaths() {
        int n = 0;
        for (Inbox dead; (dead = deaths.poll()) != null; n++) {
            onGone(dead);
        }
        return n;
    }

    /** Polling thread: sweeps if housekeeping asked (a plain read on each pass, the write only then). */
    void sweepIfWanted() {
        if (sweepWanted.get() && sweepWanted.getAndSet(false)) {
            sweep();
        }
    }

    /**
     * Polling thread: whether a peer's process (not merely its worker) was found gone since the last
     * call; only then may a record claimed in this worker's inbox stay half-written for good.
     */
    boolean takeProcessDied() {
        boolean died = processDied;
        processDied = false;
        return died;
    }

    /** Polling thread: see {@link #takeProcessDied}. */
    private boolean processDied;

    /** Polling thread: a peer worker closed or its process is gone; its lanes fail and its connections here are forgotten. */
    private void onGone(Inbox dead) {
        if (!dead.alive()) {
            processDied = true;
        }
        gone.add(dead);
        for (CmaLane l : cmaLanes) {
            if (l.peer == dead) {
                cmaLanes.remove(l);
                l.peerGone();
            }
        }
        int live = 0;
        for (ShmLane l : lanes) {
            if (l.peer == dead && l.isLive()) {
                live++;
            }
        }
        if (live > 0 && dead.closed()) { // a worker's close is no fault: its peers' lanes to it end with it
            LOG.info("shm {}: the {}; failing its {} lane(s)", workerName, dead.goneReason(), live);
        } else if (live > 0) {
            LOG.warn("shm {}: the {} ({}); failing its {} lane(s)", workerName, dead.goneReason(),
                    Segments.printable(dead.name), live);
        }
        sweep();
        target.peerGone(dead);
    }

    /**
     * Polling thread: the target forgets connections whose origins revoked their gates, and every
     * lane to a gone peer that is live or still owes answers fails (looked for again while some do).
     */
    private void sweep() {
        target.forgetRevoked();
        if (gone.isEmpty()) {
            return;
        }
        Set<Inbox> stillHeld = Collections.newSetFromMap(new IdentityHashMap<>());
        for (ShmLane l : lanes) {
            if (gone.contains(l.peer)) {
                stillHeld.add(l.peer);
                if (l.isLive() || l.awaitingAnswers()) {
                    l.fail(new EndpointFailedException("shm: " + l.peer.goneReason()));
                }
            }
        }
        gone.retainAll(stillHeld);
    }
}
