package dev.fenceline.transport.ucx;

import dev.fenceline.EndpointFailedException;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.function.BiConsumer;
import java.util.function.Consumer;

/**
 * Wireup's LEAVING, both ways (progress agent only). UCT does not say who sent a message, and
 * anyone may CONNECT in any worker's name, making channels whose ids it draws itself. Only an id
 * this worker drew (one of its own channels to the peer, told to the peer alone) proves the peer:
 * a LEAVING naming one parts the two whole. One naming an id the sender drew ends that channel
 * only, which is all its drawer can ask for.
 */
final class UcxLeaving {
    private static final org.slf4j.Logger LOG = org.slf4j.LoggerFactory.getLogger(UcxLeaving.class);

    private final UcxAgent agent;
    private final UcxPeers peers;
    private final UUID workerId;
    private final String workerName;
    private final BiConsumer<UcxChannel, UcxWireup.Message> send;
    private final Consumer<UcxPeer> forget;

    /**
     * @param agent parts this worker from a peer, or fails one channel
     * @param peers the wiring's peers and channels
     * @param workerId this worker's id, which its LEAVINGs name
     * @param workerName the worker's name, for the log
     * @param send sends a wireup message on a channel
     * @param forget lets go of a peer nothing of which is left
     */
    UcxLeaving(UcxAgent agent, UcxPeers peers, UUID workerId, String workerName,
            BiConsumer<UcxChannel, UcxWireup.Message> send, Consumer<UcxPeer> forget) {
        this.agent = agent;
        this.peers = peers;
        this.workerId = workerId;
        this.workerName = workerName;
        this.send = send;
        this.forget = forget;
    }

    /** @param l a peer's LEAVING (its fields decoded, unchecked) */
    void onLeaving(UcxWireup.Leaving l) {
        UcxChannel ours = peers.origin(l.channel());
        UcxChannel theirs = ours == null ? peers.reply(l.channel()) : null;
        if (ours != null && ours.peer.id.equals(l.worker())) {
            agent.peerLeft(ours.peer);
        } else if (theirs != null && theirs.peer.id.equals(l.worker())) {
            UcxPeer p = theirs.peer;
            agent.channelFailed(theirs, new EndpointFailedException("ucx: peer worker " + l.worker()
                    + " closed " + theirs), true);
            if (p.unused()) {
                forget.accept(p);
            }
        } else {
            LOG.debug("ucx {}: a LEAVING from {} naming no channel of ours with it, dropped", workerName,
                    l.worker());
        }
    }

    /**
     * Tells every peer this worker is closing, naming every channel between them, on one ready
     * channel to each that carries messages (best effort: a peer that does not hear it finds out by
     * UCT or keepalive). A channel the peer drew parts the two whole, if the peer still has its end
     * of it; each channel this worker drew ends that channel at the peer (all a worker that only
     * dialed the peer has to name).
     */
    void leaving() {
        for (UcxPeer p : peers.allPeers()) {
            UcxChannel carrier = null;
            List<Long> names = new ArrayList<>(); // a copy: a send that fails the carrier changes the peer's lists
            for (UcxChannel c : p.replyChannels.values()) {
                names.add(c.id);
                if (carrier == null && carriesWireup(c)) {
                    carrier = c;
                }
            }
            for (UcxChannel c : p.originChannels) {
                if (!c.origin) {
                    continue; // the peer dialed it: named above
                }
                names.add(c.id);
                if (carrier == null && carriesWireup(c)) {
                    carrier = c;
                }
            }
            for (int i = 0; carrier != null && i < names.size() && carrier.state != UcxChannel.State.FAILED; i++) {
                send.accept(carrier, new UcxWireup.Leaving(workerId, names.get(i)));
            }
        }
    }

    private static boolean carriesWireup(UcxChannel c) {
        return c.ready() && c.iface.attributes().has(UctIfaceAttributes.AM_BCOPY);
    }
}
