package dev.fenceline.transport.ucx;

import dev.fenceline.transport.ucx.UcxLanePlanner.Candidate;
import java.security.SecureRandom;
import java.util.List;

/**
 * The channels an origin's connects make and unmake: on a planned iface, the peer's existing
 * channel or a new UCT endpoint there, known to {@link UcxPeers} at once; and a channel a failed
 * attempt made and nothing uses, closed quietly. Agent thread only.
 */
final class UcxOriginChannels {
    private final UcxPeers peers;
    private final SecureRandom random;

    /**
     * @param peers the wiring's peers and channels
     * @param random draws a new channel's id
     */
    UcxOriginChannels(UcxPeers peers, SecureRandom random) {
        this.peers = peers;
        this.random = random;
    }

    /** The channel on a candidate in that mode: the peer's existing one, or a new one (added to the lists). */
    UcxChannel channel(UcxPeer peer, Candidate c, UcxWireup.Mode mode, List<UcxChannel> channels,
            List<UcxWireup.Channel> wired) {
        return channel(peer, c, mode, channels, wired, false);
    }

    /**
     * As above; {@code fresh}: a new channel even where one exists (a replacement's). Where this
     * worker has no channel of its own there, one the peer dialed between the same two ifaces
     * serves ({@link UcxWireup.Mode#REVERSE}).
     */
    UcxChannel channel(UcxPeer peer, Candidate c, UcxWireup.Mode mode, List<UcxChannel> channels,
            List<UcxWireup.Channel> wired, boolean fresh) {
        UcxChannel ch = fresh ? null : peer.originChannel(c.local(), mode);
        if (ch == null && !fresh && mode == UcxWireup.Mode.IFACE) {
            ch = reversible(peer, c);
            if (ch != null) {
                peers.reverse(ch);
            }
        }
        if (ch != null) {
            if (!channels.contains(ch)) {
                channels.add(ch);
                wired.add(ch.origin ? new UcxWireup.Channel(ch.id, c.local(), c.remote(), UcxWireup.Mode.EXISTING,
                        new byte[0]) : new UcxWireup.Channel(ch.id, ch.ifaceIndex, ch.peerIface,
                        UcxWireup.Mode.REVERSE, new byte[0]));
            }
            return ch;
        }
        long id = random.nextLong();
        byte[] endpointAddress = new byte[0];
        UctEndpoint ep;
        if (mode == UcxWireup.Mode.IFACE) {
            ep = c.iface().connect(peer.address.ifaces().get(c.remote()).address());
        } else {
            ep = c.iface().unconnected();
            endpointAddress = ep.address();
        }
        ch = new UcxChannel(id, peer, c.iface(), c.local(), c.remote(), ep, mode, true,
                mode == UcxWireup.Mode.IFACE ? UcxChannel.State.READY : UcxChannel.State.WIRING);
        peers.addOrigin(ch);
        channels.add(ch);
        wired.add(new UcxWireup.Channel(id, c.local(), c.remote(), mode, endpointAddress));
        return ch;
    }

    /**
     * @return a ready channel the peer dialed from the candidate's iface there to its iface here, to
     *     the peer's iface, that can carry this worker's lanes too; or null
     */
    private static UcxChannel reversible(UcxPeer peer, Candidate c) {
        for (UcxChannel r : peer.replyChannels.values()) {
            if (r.ifaceIndex == c.local() && r.peerIface == c.remote() && r.mode == UcxWireup.Mode.IFACE
                    && r.ready() && !r.refused && !r.noReverse) {
                return r;
            }
        }
        return null;
    }

    /**
     * Closes a channel nothing uses (a failed reconnect attempt's), quietly: its lanes are gone and
     * no connect waits for it.
     */
    void drop(UcxChannel ch) {
        if (ch.state == UcxChannel.State.FAILED) {
            return;
        }
        ch.state = UcxChannel.State.FAILED;
        peers.remove(ch);
        ch.ep.close();
    }
}
