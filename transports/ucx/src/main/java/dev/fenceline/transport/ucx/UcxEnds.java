package dev.fenceline.transport.ucx;

import dev.fenceline.EndpointFailedException;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.function.BooleanSupplier;

/**
 * How the progress agent's channels, peers and lanes end. A channel that failed takes its lanes
 * with it (each fails once); a peer whose process went, whose worker closed, or whose address
 * contradicts what it said takes every channel to and from it; a lane its endpoint let go is
 * forgotten once it owes no answers. Progress agent only.
 */
final class UcxEnds {
    private static final org.slf4j.Logger LOG = org.slf4j.LoggerFactory.getLogger(UcxEnds.class);

    private final String workerName;
    private final UcxWiring wiring;
    /** Whether the agent closed: its own channels' failures are then not news. */
    private final BooleanSupplier closed;

    UcxEnds(String workerName, UcxWiring wiring, BooleanSupplier closed) {
        this.workerName = workerName;
        this.wiring = wiring;
        this.closed = closed;
    }

    /**
     * A channel is dead: its lanes fail (once each), its target connections are forgotten, its
     * endpoint goes; said in the log, unless its peer's process is gone, this worker closed, or the
     * channel was made for a refused connect (whose sender provokes that at will).
     *
     * @param ch the channel
     * @param cause why
     * @param peerDead whether its peer's process is gone (then nothing it was sent will apply)
     */
    void channelFailed(UcxChannel ch, Throwable cause, boolean peerDead) {
        if (ch.state == UcxChannel.State.FAILED) {
            return;
        }
        ch.state = UcxChannel.State.FAILED;
        if (!peerDead && !closed.getAsBoolean() && !ch.refused) {
            LOG.warn("ucx {}: {}", workerName, cause.getMessage());
        }
        for (UcxLane l : List.copyOf(ch.lanes)) {
            l.peerDead |= peerDead;
            l.channelFailed = true;
            l.traffic.waiting.clear();
            l.fail(cause);
        }
        wiring.forgetChannel(ch);
        ch.closeEndpointWhenIdle();
    }

    /** The transport actor heard that a peer's process is gone. */
    void peerGone(UUID id) {
        UcxPeer p = wiring.peerOf(id);
        if (p != null) {
            peerEnded(p, new EndpointFailedException("ucx: the process of peer worker " + id + " is gone"), true);
        }
    }

    /**
     * A peer worker said it closed (wireup's LEAVING): its target applies nothing more, as if its
     * process had gone; but its process lives, so a transfer UCT still holds may land.
     */
    void peerLeft(UcxPeer p) {
        LOG.debug("ucx {}: peer worker {} closed", workerName, p.id);
        peerEnded(p, new EndpointFailedException("ucx: peer worker " + p.id + " closed"), false);
    }

    /**
     * A worker's address as this worker dials it contradicts the one a CONNECT gave under its id:
     * what was made on that word goes (its process may live on, so nothing is said of what it applied).
     */
    void peerContradicted(UcxPeer p, EndpointFailedException why) {
        LOG.warn("ucx {}: {}", workerName, why.getMessage());
        dropPeer(p, why, false, false);
    }

    private void peerEnded(UcxPeer p, EndpointFailedException why, boolean processGone) {
        p.dead = true;
        dropPeer(p, why, true, processGone);
    }

    /** Fails every channel to and from the peer, then forgets it. */
    private void dropPeer(UcxPeer p, EndpointFailedException why, boolean peerDead, boolean processGone) {
        for (UcxChannel c : List.copyOf(p.originChannels)) {
            for (UcxLane l : c.lanes) {
                l.processGone |= processGone;
            }
            channelFailed(c, why, peerDead);
        }
        for (UcxChannel c : new ArrayList<>(p.replyChannels.values())) {
            channelFailed(c, why, peerDead);
        }
        wiring.forgetPeer(p);
    }

    /** The endpoint let a lane go: it is forgotten now, or once it owes no answers. */
    void laneEnded(UcxLane lane) {
        wiring.recovery.lost(lane); // if its endpoint failed over and still wants the slot
        lane.traffic.waiting.clear(); // never sent: the revocation says so
        if (lane.owesAnswers()) {
            lane.forgetWhenAnswered = true;
            return;
        }
        forget(lane);
    }

    /** A lane got an answer: a lane its endpoint is done with is forgotten once it owes none. */
    void answered(UcxLane lane) {
        if (lane.forgetWhenAnswered && !lane.owesAnswers()) {
            forget(lane);
        }
    }

    private void forget(UcxLane lane) {
        if (wiring.lanes.remove(lane.conn) == lane) {
            lane.channel.lanes.remove(lane);
            wiring.bye(lane);
        }
        lane.forgotten();
    }
}
