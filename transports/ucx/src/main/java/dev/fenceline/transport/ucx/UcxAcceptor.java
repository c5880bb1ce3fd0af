package dev.fenceline.transport.ucx;

import dev.fenceline.EndpointFailedException;
import dev.fenceline.FencelineException;
import java.util.ArrayList;
import java.util.List;
import java.util.function.BiConsumer;
import org.agrona.collections.LongHashSet;

/**
 * The target's side of wireup (see {@link UcxWireup}): a peer's CONNECT is checked whole (its
 * address, the channels it names or makes against this worker's ifaces and {@code
 * max-incoming-channels}, its lanes against {@code max-lanes-per-peer} and all peers' against {@code
 * max-incoming-lanes}) before any UCT endpoint is made for it; then this worker's end of each new
 * channel is made, the lanes are opened at the target, and CONNECTED goes back on the CONNECT's
 * first channel. Where any of that is refused, REFUSED says why on the first channel (made for it
 * only while few such are open) and then the channels made for it end, without a warning each (once
 * the refusal has left a channel still connecting, or after the connect timeout; meanwhile no later
 * connect may name them).
 * Everything in a CONNECT is a peer's bytes, checked before it is used. Agent thread only.
 */
final class UcxAcceptor {
    private static final org.slf4j.Logger LOG = org.slf4j.LoggerFactory.getLogger(UcxAcceptor.class);
    /** Channels past {@code max-incoming-channels} made only to carry refusals, at most, at once. */
    static final int REFUSAL_CHANNELS = 16;

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
    /** UCT endpoints made for peers' channels, ever (agent thread). */
    private long channelsMade;

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

    /** @return whether the CONNECT makes a channel on one of this worker's shared-memory ifaces */
    private boolean makesSharedMemoryChannels(UcxWireup.Connect m) {
        for (UcxWireup.Channel c : m.channels()) {
            if (c.mode().made() && c.targetIface() >= 0 && c.targetIface() < ifaces.size()
                    && UcxLanePlanner.sharedMemory(ifaces.get(c.targetIface()))) {
                return true;
            }
        }
        return false;
    }

    /** @return UCT endpoints made for peers' channels so far (agent thread) */
    long channelsMade() {
        return channelsMade;
    }

    /**
     * @param m a CONNECT from a peer (its bytes decoded, the rest unchecked)
     * @param overSharedMemory whether it came over a shared-memory iface
     */
    void onConnect(UcxWireup.Connect m, boolean overSharedMemory) {
        UcxAddress address;
        try {
            address = UcxAddress.decode(m.address());
        } catch (FencelineException e) {
            dropped.warn(() -> "a CONNECT from " + m.worker() + " with a malformed address, dropped: " + e.getMessage());
            return;
        }
        if (!overSharedMemory && makesSharedMemoryChannels(m)) {
            // Only a process of this user writes this worker's shared memory (its queue opens through
            // /proc): one that reaches it over the network could otherwise have it map and write the
            // queue of any process of this user. No answer: that would go on such a channel.
            dropped.warn(() -> "a CONNECT from " + m.worker() + " that came over the network makes channels on this"
                    + " worker's shared memory, dropped: those are wired up over shared memory only");
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
            // Everything a CONNECT names is checked before any UCT endpoint is made for it: a refused
            // one leaves nothing to end but the channel its refusal goes on.
            int fresh = check(peer, m);
            if (peers.replyChannels() + fresh > settings.maxIncomingChannels()) {
                throw new FencelineException("ucx: worker '" + workerName + "' holds " + peers.replyChannels()
                        + " channels of its peers, and this connect's " + fresh + " more would pass "
                        + UcxSettings.SECTION + ".max-incoming-channels = " + settings.maxIncomingChannels());
            }
            List<UcxChannel> channels = new ArrayList<>();
            List<UcxWireup.End> ends = new ArrayList<>();
            for (UcxWireup.Channel c : m.channels()) {
                UcxChannel ch = switch (c.mode()) {
                    case EXISTING -> peer.replyChannels.get(c.id());
                    case REVERSE -> peers.origin(c.id());
                    case IFACE, ENDPOINT -> make(peer, c, made);
                };
                channels.add(ch);
                if (c.mode().made()) {
                    ends.add(new UcxWireup.End(c.id(), c.mode() == UcxWireup.Mode.ENDPOINT ? ch.ep.address() : new byte[0]));
                }
                if (answer == null) {
                    answer = ch; // checked: one that connects to the peer's iface
                }
            }
            List<Integer> maxGets = new ArrayList<>(m.lanes().size());
            for (UcxWireup.Lane l : m.lanes()) {
                UcxIncoming in = new UcxIncoming(peer, channels.get(l.channel()));
                target.open(l.conn(), in);
                maxGets.add(Math.min(target.maxGet(), in.maxGet()));
            }
            for (int i = 0; i < channels.size(); i++) {
                if (m.channels().get(i).mode() == UcxWireup.Mode.REVERSE) {
                    peers.bothWays(channels.get(i)); // checked: this worker's, to the peer, between those ifaces
                }
            }
            send.accept(answer, new UcxWireup.Connected(m.dial(), ends, maxGets));
            peers.established(peer);
        } catch (FencelineException | IllegalArgumentException | IndexOutOfBoundsException e) {
            UcxPeer refusedPeer = peer;
            refused.warn(() -> "refused a connect from " + refusedPeer + ": " + e.getMessage());
            if (answer == null) {
                answer = refusalChannel(peer, m.channels().get(0), made);
            }
            for (UcxChannel ch : made) {
                ch.refused = true; // no later connect may name them; a refusal on one makes no other channel fail
            }
            if (answer != null && answer.state != UcxChannel.State.FAILED) {
                send.accept(answer, new UcxWireup.Refused(m.dial(), e instanceof NotOwnChannel,
                        String.valueOf(e.getMessage())));
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

    /**
     * Checks what a CONNECT names against what this worker has and its bounds, making nothing.
     *
     * @return how many channels it makes
     * @throws FencelineException why it is refused
     */
    private int check(UcxPeer peer, UcxWireup.Connect m) {
        if (peer.incoming + m.lanes().size() > settings.maxLanesPerPeer()) {
            throw new FencelineException("ucx: worker '" + workerName + "' holds " + peer.incoming + " lanes of "
                    + peer + ", and " + UcxSettings.SECTION + ".max-lanes-per-peer = " + settings.maxLanesPerPeer());
        }
        if (target.incoming() + m.lanes().size() > settings.maxIncomingLanes()) {
            throw new FencelineException("ucx: worker '" + workerName + "' holds " + target.incoming() + " lanes"
                    + " of its peers, and " + UcxSettings.SECTION + ".max-incoming-lanes = "
                    + settings.maxIncomingLanes());
        }
        // Every lane is checked before any is opened: a refusal opens none (an id taken by a later
        // lane would otherwise leave the earlier ones open on channels that stay).
        LongHashSet ids = new LongHashSet();
        for (UcxWireup.Lane l : m.lanes()) {
            if (target.isOpen(l.conn()) || !ids.add(l.conn())) {
                throw new FencelineException("ucx: connection id " + Long.toHexString(l.conn()) + " is taken");
            }
        }
        LongHashSet made = new LongHashSet();
        int fresh = 0;
        for (int i = 0; i < m.channels().size(); i++) {
            UcxWireup.Channel c = m.channels().get(i);
            checkChannel(peer, c, i == 0);
            if (c.mode().made()) {
                if (!made.add(c.id())) {
                    throw new FencelineException("ucx: the CONNECT makes channel " + Long.toHexString(c.id()) + " twice");
                }
                fresh++;
            }
        }
        return fresh;
    }

    /**
     * Checks one channel a CONNECT names: an existing one of its peer that serves, or a new one to
     * an iface of the peer this worker's iface of that index reaches.
     *
     * @param answers whether the CONNECTED goes on it (the first): it must connect to the peer's iface
     */
    private void checkChannel(UcxPeer peer, UcxWireup.Channel c, boolean answers) {
        if (c.mode() == UcxWireup.Mode.REVERSE) {
            UcxChannel ours = peers.origin(c.id());
            if (ours == null || ours.peer != peer || !ours.ready() || ours.mode != UcxWireup.Mode.IFACE
                    || ours.ifaceIndex != c.targetIface() || ours.peerIface != c.originIface()) {
                throw new NotOwnChannel("ucx: the CONNECT names channel " + Long.toHexString(c.id())
                        + " as this worker's, from its iface " + c.targetIface() + " to the peer's " + c.originIface()
                        + ", which this worker does not have");
            }
            return; // to the peer's iface: its answer can go there
        }
        UcxChannel known = peer.replyChannels.get(c.id());
        if (c.mode() == UcxWireup.Mode.EXISTING) {
            if (known == null || known.state == UcxChannel.State.FAILED || known.refused) {
                throw new FencelineException("ucx: the CONNECT names channel " + Long.toHexString(c.id())
                        + ", which this worker does not have");
            }
            if (answers && known.mode != UcxWireup.Mode.IFACE) {
                throw new FencelineException("ucx: the CONNECT's first channel connects endpoint to endpoint;"
                        + " its answer cannot go there");
            }
            return;
        }
        if (known != null || peers.reply(c.id()) != null) {
            // Ids name reply channels across peers (a HELLO, a LEAVING): one taken by any peer is
            // refused, or reused ids would replace entries and the channels past them go uncounted.
            throw new FencelineException("ucx: the CONNECT makes channel " + Long.toHexString(c.id()) + " again");
        }
        if (answers && c.mode() != UcxWireup.Mode.IFACE) {
            throw new FencelineException("ucx: the CONNECT's first channel connects endpoint to endpoint;"
                    + " its answer cannot go there");
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
    }

    /** This worker's end of a new channel a CONNECT names (checked): its UCT endpoint made and listed. */
    private UcxChannel make(UcxPeer peer, UcxWireup.Channel c, List<UcxChannel> made) {
        UctIface iface = ifaces.get(c.targetIface());
        UcxAddress.Iface theirs = peer.address.ifaces().get(c.originIface());
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
        channelsMade++;
        return ch;
    }

    /**
     * The channel a refusal goes on, where the CONNECT was refused before its first channel was
     * had: an existing one that serves, or the new one it names, made only while the channels made
     * to carry refusals stay few ({@link #REFUSAL_CHANNELS} past {@code max-incoming-channels});
     * else none, and the sender learns of the refusal by its connect timeout.
     */
    private UcxChannel refusalChannel(UcxPeer peer, UcxWireup.Channel first, List<UcxChannel> made) {
        try {
            if (first.mode() == UcxWireup.Mode.REVERSE) {
                UcxChannel ours = peers.origin(first.id());
                if (ours != null && ours.peer == peer && ours.ready()) {
                    return ours;
                }
                // Not this worker's (a third may have made it at the sender in this one's name): the
                // refusal goes on a reply endpoint of its own, so that the sender dials again at once.
                first = new UcxWireup.Channel(first.id(), first.originIface(), first.targetIface(),
                        UcxWireup.Mode.IFACE, new byte[0]);
            }
            checkChannel(peer, first, true);
            if (first.mode() == UcxWireup.Mode.EXISTING) {
                return peer.replyChannels.get(first.id());
            }
            if (peers.replyChannels() >= settings.maxIncomingChannels() + REFUSAL_CHANNELS) {
                return null;
            }
            return make(peer, first, made);
        } catch (FencelineException e) {
            return null; // the refusal has nowhere to go
        }
    }

    /** A REVERSE naming a channel this worker does not have to the sender: its refusal says so. */
    private static final class NotOwnChannel extends FencelineException {
        private static final long serialVersionUID = 1L;

        NotOwnChannel(String message) {
            super(message);
        }
    }
}
