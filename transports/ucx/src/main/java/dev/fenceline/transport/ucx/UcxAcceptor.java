package dev.fenceline.transport.ucx;

import dev.fenceline.EndpointFailedException;
import dev.fenceline.FencelineException;
import java.util.ArrayList;
import java.util.List;
import java.util.function.BiConsumer;

/**
 * The target's side of wireup (see {@link UcxWireup}): a peer's CONNECT is checked (its address, the
 * channels it names or makes, its lanes against {@code max-lanes-per-peer} and all peers' against
 * {@code max-incoming-lanes}), this worker's end of each new channel is made, the lanes are opened at
 * the target, and CONNECTED goes back on the CONNECT's first channel; or, where any of that is
 * refused, REFUSED says why and then the channels made for it end (once the refusal has left a
 * channel still connecting, or after the connect timeout; meanwhile no later connect may name them).
 * Everything in a CONNECT is a peer's bytes, checked before it is used. Agent thread only.
 */
final class UcxAcceptor {
    private static final org.slf4j.Logger LOG = org.slf4j.LoggerFactory.getLogger(UcxAcceptor.class);

    private final UcxAgent agent;
    private final UcxTarget target;
    private final UcxSettings settings;
    private final String workerName;
    private final List<UctIface> ifaces;
    private final UcxPeers peers;
    private final BiConsumer<UcxChannel, UcxWireup.Message> send;
    /** Dropped CONNECTs, and refused ones: counted apart, so that a flood of one hides none of the other. */
    private final UcxPeerWarnings dropped;
    private final UcxPeerWarnings refused;
    private final java.util.function.Consumer<UcxPeer> forget;

    /**
     * @param agent fails the channels of a refused connect
     * @param target where the connect's lanes are opened
     * @param settings the transport's settings
     * @param workerName the worker's name, for the log
     * @param ifaces this worker's ifaces, in the order its address lists them
     * @param peers the wiring's peers and channels
     * @param send sends a wireup message on a channel
     * @param forget lets go of a peer known only from a refused connect
     */
    UcxAcceptor(UcxAgent agent, UcxTarget target, UcxSettings settings, String workerName, List<UctIface> ifaces,
            UcxPeers peers, BiConsumer<UcxChannel, UcxWireup.Message> send,
            java.util.function.Consumer<UcxPeer> forget) {
        this.agent = agent;
        this.forget = forget;
        this.target = target;
        this.settings = settings;
        this.workerName = workerName;
        this.ifaces = ifaces;
        this.peers = peers;
        this.send = send;
        this.dropped = new UcxPeerWarnings(workerName);
        this.refused = new UcxPeerWarnings(workerName);
    }

    /** @param m a CONNECT from a peer (its bytes decoded, the rest unchecked) */
    void onConnect(UcxWireup.Connect m) {
        UcxAddress address;
        try {
            address = UcxAddress.decode(m.address());
        } catch (FencelineException e) {
            dropped.warn(() -> "a CONNECT from " + m.worker() + " with a malformed address, dropped: " + e.getMessage());
            return;
        }
        if (m.lanes().isEmpty()) {
            // A dial always asks for a lane; one for none would only make this worker hold channels.
            dropped.warn(() -> "a CONNECT from " + m.worker() + " asks for no lane, dropped");
            return;
        }
        UcxPeer peer;
        boolean stranger = peers.known(m.worker()) == null;
        try {
            peer = peers.peer(m.worker(), address);
        } catch (FencelineException e) {
            LOG.debug("ucx {}: a CONNECT from {} dropped: {}", workerName, m.worker(), e.getMessage());
            return;
        }
        UcxChannel answer = null;
        List<UcxChannel> made = new ArrayList<>();
        try {
            List<UcxChannel> channels = new ArrayList<>();
            List<UcxWireup.End> ends = new ArrayList<>();
            for (UcxWireup.Channel c : m.channels()) {
                UcxChannel ch = replyChannel(peer, c, made);
                channels.add(ch);
                if (c.mode() != UcxWireup.Mode.EXISTING) {
                    ends.add(new UcxWireup.End(c.id(), c.mode() == UcxWireup.Mode.ENDPOINT ? ch.ep.address() : new byte[0]));
                }
                if (answer == null) {
                    if (ch.mode != UcxWireup.Mode.IFACE) {
                        throw new FencelineException("ucx: the CONNECT's first channel connects endpoint to endpoint;"
                                + " its answer cannot go there");
                    }
                    answer = ch;
                }
            }
            if (peer.incoming + m.lanes().size() > settings.maxLanesPerPeer()) {
                throw new FencelineException("ucx: worker '" + workerName + "' holds " + peer.incoming + " lanes of "
                        + peer + ", and " + UcxSettings.SECTION + ".max-lanes-per-peer = "
                        + settings.maxLanesPerPeer());
            }
            if (peers.replyChannels() > settings.maxIncomingChannels()) { // those it made are failed below
                throw new FencelineException("ucx: worker '" + workerName + "' holds " + peers.replyChannels()
                        + " channels of its peers with this connect's, and " + UcxSettings.SECTION
                        + ".max-incoming-channels = " + settings.maxIncomingChannels());
            }
            if (target.incoming() + m.lanes().size() > settings.maxIncomingLanes()) {
                throw new FencelineException("ucx: worker '" + workerName + "' holds " + target.incoming() + " lanes"
                        + " of its peers, and " + UcxSettings.SECTION + ".max-incoming-lanes = "
                        + settings.maxIncomingLanes());
            }
            // Every lane is checked before any is opened: a refusal opens none (an id taken by a
            // later lane would otherwise leave the earlier ones open on channels that stay).
            org.agrona.collections.LongHashSet ids = new org.agrona.collections.LongHashSet();
            for (UcxWireup.Lane l : m.lanes()) {
                if (target.isOpen(l.conn()) || !ids.add(l.conn())) {
                    throw new FencelineException("ucx: connection id " + Long.toHexString(l.conn()) + " is taken");
                }
            }
            for (UcxWireup.Lane l : m.lanes()) {
                target.open(l.conn(), new UcxTarget.Conn(peer, channels.get(l.channel())));
            }
            send.accept(answer, new UcxWireup.Connected(m.dial(), ends));
            peers.established(peer);
        } catch (FencelineException | IllegalArgumentException | IndexOutOfBoundsException e) {
            UcxPeer refusedPeer = peer;
            refused.warn(() -> "refused a connect from " + refusedPeer + ": " + e.getMessage());
            for (UcxChannel ch : made) {
                ch.refused = true; // no later connect may name them; a refusal on one makes no other channel fail
            }
            if (answer != null && answer.state != UcxChannel.State.FAILED) {
                send.accept(answer, new UcxWireup.Refused(m.dial(), String.valueOf(e.getMessage())));
            }
            Runnable end = () -> {
                for (UcxChannel ch : made) {
                    agent.channelFailed(ch, new EndpointFailedException("ucx: the connect was refused"), false);
                }
                if (stranger && peer.unused() && peers.known(peer.id) == peer) {
                    forget.accept(peer); // a refused connect of a worker not known before leaves nothing behind
                }
            };
            if (answer != null && answer.blocked() && made.contains(answer)) {
                // The refusal waits for room on a channel made for it (one still connecting): the
                // channels end once it has gone, or after the connect timeout.
                answer.afterBacklog = end;
                answer.afterBacklogBy = System.nanoTime() + settings.connectTimeout().toNanos();
            } else {
                end.run();
            }
        }
    }

    /** This worker's end of a channel a CONNECT names: an existing one of its peer, or a new one. */
    private UcxChannel replyChannel(UcxPeer peer, UcxWireup.Channel c, List<UcxChannel> made) {
        UcxChannel known = peer.replyChannels.get(c.id());
        if (c.mode() == UcxWireup.Mode.EXISTING) {
            if (known == null || known.state == UcxChannel.State.FAILED || known.refused) {
                throw new FencelineException("ucx: the CONNECT names channel " + Long.toHexString(c.id())
                        + ", which this worker does not have");
            }
            return known;
        }
        if (known != null) {
            throw new FencelineException("ucx: the CONNECT makes channel " + Long.toHexString(c.id()) + " again");
        }
        if (c.targetIface() >= ifaces.size() || c.originIface() >= peer.address.ifaces().size()) {
            throw new FencelineException("ucx: the CONNECT names iface " + c.targetIface() + " here (of "
                    + ifaces.size() + ") and " + c.originIface() + " there (of " + peer.address.ifaces().size() + ")");
        }
        UctIface iface = ifaces.get(c.targetIface());
        UcxAddress.Iface theirs = peer.address.ifaces().get(c.originIface());
        if (!theirs.transport().equals(iface.resource().transport()) || !iface.reachable(theirs.address())) {
            throw new FencelineException("ucx: " + iface + " does not reach the peer's " + theirs.transport() + "/"
                    + theirs.device());
        }
        UctEndpoint ep;
        if (c.mode() == UcxWireup.Mode.IFACE) {
            ep = iface.connect(theirs.address());
        } else {
            ep = iface.unconnected();
            try {
                ep.connectTo(theirs.address(), c.endpoint());
            } catch (FencelineException e) {
                ep.close();
                throw e;
            }
        }
        UcxChannel ch = new UcxChannel(c.id(), peer, iface, c.targetIface(), c.originIface(), ep, c.mode(), false,
                c.mode() == UcxWireup.Mode.IFACE ? UcxChannel.State.READY : UcxChannel.State.WIRING);
        peers.addReply(ch);
        made.add(ch);
        return ch;
    }
}
