package dev.fenceline.transport.ucx;

import dev.fenceline.EndpointFailedException;
import dev.fenceline.FencelineException;
import dev.fenceline.spi.support.Host;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import org.agrona.collections.Long2ObjectHashMap;

/**
 * The peers a worker's wiring knows and their channels, under every name UCT's events and the
 * wireup messages give them: a peer by its worker id, a channel by its UCT endpoint's handle (error
 * and ready events), an origin channel by its own id (greeting answers), a reply channel by the id
 * the origin gave it. A channel is in the maps exactly while its peer lists it. Agent thread only.
 */
final class UcxPeers {
    private static final org.slf4j.Logger LOG = org.slf4j.LoggerFactory.getLogger(UcxPeers.class);

    private final Map<UUID, UcxPeer> peers = new HashMap<>();
    private final Long2ObjectHashMap<UcxChannel> byEndpoint = new Long2ObjectHashMap<>();
    private final Long2ObjectHashMap<UcxChannel> origins = new Long2ObjectHashMap<>();
    private final Long2ObjectHashMap<UcxChannel> replies = new Long2ObjectHashMap<>();
    private final List<UctIface> ifaces;
    private final String host;
    private final String workerName;
    private final UcxWiringReports reports;

    /** @return this host's identity, as the addresses of workers on it carry it */
    static String thisHost() {
        return Host.bootId() + " " + Host.pidNamespaceId();
    }

    /**
     * @param ifaces this worker's ifaces (a peer's key table is unpacked on the one of its memory domain)
     * @param host this host's identity, as addresses carry it
     * @param workerName the worker's name, for the log
     * @param reports told of each established peer on this host (its process is watched)
     */
    UcxPeers(List<UctIface> ifaces, String host, String workerName, UcxWiringReports reports) {
        this.ifaces = ifaces;
        this.host = host;
        this.workerName = workerName;
        this.reports = reports;
    }

    /**
     * @param id a worker's id
     * @param address its address (for a peer known already, the one it is known by stands: a
     *     CONNECT naming its id is its sender's word, and must not bring a table the peer had not)
     * @return its peer, new or known; its key table mapped where it is on this host
     * @throws EndpointFailedException if its process is known to be gone
     */
    UcxPeer peer(UUID id, UcxAddress address) {
        UcxPeer p = peers.get(id);
        if (p == null) {
            p = new UcxPeer(id, address);
            peers.put(id, p);
        } else if (p.dead) {
            throw new EndpointFailedException("ucx: the peer process of worker " + id + " is gone");
        }
        if (p.table == null && p.address.table() != null && p.address.host().equals(host)) {
            mapTable(p, p.address.table());
        }
        return p;
    }

    /**
     * A peer this worker dials, or whose connect it accepted: its process is watched from now on
     * where it is on this host (once; not for a peer known only from a refused connect, whose
     * address is the sender's word).
     *
     * @param p the peer
     */
    void established(UcxPeer p) {
        if (!p.watched && p.address.host().equals(host)) {
            p.watched = true;
            reports.peerSeen(p.id, p.address.pid(), p.address.start());
        }
    }

    private void mapTable(UcxPeer p, UcxAddress.Table t) {
        for (UctIface i : ifaces) {
            if (i.resource().memoryDomain().equals(t.component())) {
                UctRemoteKey k = null;
                ProcessMappings.Snapshot before = ProcessMappings.snapshot();
                try {
                    k = i.unpack(t.rkey());
                    long at = k.pointer(t.address());
                    if (at == 0) {
                        k.close();
                        return;
                    }
                    if (!ProcessMappings.reaches(before, at, t.length())) { // the length is the peer's word
                        throw new FencelineException("ucx: its " + t.length() + " bytes are not mapped here whole");
                    }
                    p.table = new KeyTable.View(at, t.length());
                    p.tableKey = k;
                } catch (FencelineException e) {
                    if (k != null) {
                        k.close(); // not a table: its mapping goes now, not with the iface
                    }
                    LOG.debug("ucx {}: the key table of {} is not reachable ({}); its regions go by message",
                            workerName, p, e.getMessage());
                }
                return;
            }
        }
    }

    /** @return the peer of a worker id, or null */
    UcxPeer known(UUID id) {
        return peers.get(id);
    }

    /** @return the channel of a UCT endpoint's handle, or null */
    UcxChannel byEndpoint(long handle) {
        return byEndpoint.get(handle);
    }

    /** @return the origin channel of an id, or null */
    UcxChannel origin(long id) {
        return origins.get(id);
    }

    /** @return the reply channel of the id its origin gave it, or null */
    UcxChannel reply(long id) {
        return replies.get(id);
    }

    /** @return the origin channels, to iterate (not to change) */
    Iterable<UcxChannel> origins() {
        return origins.values();
    }

    /** @param ch a channel this worker dialed: listed by its peer and known by its names */
    void addOrigin(UcxChannel ch) {
        ch.peer.originChannels.add(ch);
        byEndpoint.put(ch.ep.handle, ch);
        origins.put(ch.id, ch);
    }

    /** @param ch this worker's end of a channel a peer dialed: listed by its peer and known by its names */
    void addReply(UcxChannel ch) {
        ch.peer.replyChannels.put(ch.id, ch);
        byEndpoint.put(ch.ep.handle, ch);
        replies.put(ch.id, ch);
    }

    /**
     * This worker's lanes go on a channel the peer dialed (a CONNECT names it REVERSE): listed among
     * the peer's origin channels, under the peer's id for it (this worker's ids stay its own), until
     * the peer takes it ({@link #bothWays}) or refuses ({@link #neverReverse}).
     *
     * @param ch a ready channel the peer dialed, to its iface
     */
    void reverse(UcxChannel ch) {
        if (ch.state != UcxChannel.State.FAILED && !ch.peer.originChannels.contains(ch)) {
            ch.peer.originChannels.add(ch);
        }
    }

    /**
     * A channel carries both ways: one this worker dialed whose peer's lanes go on it too (their
     * answers go on it), or one the peer dialed that it took for this worker's lanes.
     *
     * @param ch the channel
     */
    void bothWays(UcxChannel ch) {
        if (ch.state == UcxChannel.State.FAILED) {
            return; // failed before the peer's answer came: no longer listed, and not again
        }
        ch.bothWays = true;
        if (!ch.origin) {
            reverse(ch);
        }
    }

    /**
     * Of channels a peer dialed, those it never took for this worker's lanes carry none of them
     * from now on ({@link #neverReverse}).
     *
     * @param channels channels the peer dialed
     */
    void neverReverseUnproven(java.util.Collection<UcxChannel> channels) {
        for (UcxChannel ch : List.copyOf(channels)) {
            if (!ch.bothWays) {
                neverReverse(ch);
            }
        }
    }

    /**
     * A channel the peer dialed that it did not take for this worker's lanes: it carries none of
     * them from now on (those on it already go with the connect that named it, which is refused or
     * times out).
     *
     * @param ch a reply channel
     */
    private void neverReverse(UcxChannel ch) {
        ch.noReverse = true;
        ch.peer.originChannels.remove(ch);
    }

    /** @param ch a channel that failed or was dropped: no longer listed or known */
    void remove(UcxChannel ch) {
        byEndpoint.remove(ch.ep.handle);
        if (ch.origin) {
            origins.remove(ch.id);
        } else {
            replies.remove(ch.id);
            ch.peer.replyChannels.remove(ch.id);
        }
        ch.peer.originChannels.remove(ch);
    }

    /** @return this worker's ends of the channels peers dialed, open now */
    int replyChannels() {
        return replies.size();
    }

    /** @param p a peer whose channels all failed: no longer known */
    void remove(UcxPeer p) {
        peers.remove(p.id);
    }

    /**
     * Lets go of a forgotten peer's key table: its key is released unless the table was published
     * to calling threads (a published mapping is never unmapped).
     *
     * @param p the peer
     */
    static void unmapTable(UcxPeer p) {
        if (p.tableKey != null) {
            if (!p.tablePublished) {
                p.tableKey.close();
            }
            p.tableKey = null;
            p.table = null;
        }
    }

    /** @return every channel, for the agent's close */
    List<UcxChannel> allChannels() {
        List<UcxChannel> all = new ArrayList<>();
        for (UcxPeer p : peers.values()) {
            for (UcxChannel c : p.originChannels) {
                if (c.origin) { // one the peer dialed is among its reply channels
                    all.add(c);
                }
            }
            p.replyChannels.values().forEach(all::add);
        }
        return all;
    }

    /** @return every peer */
    List<UcxPeer> allPeers() {
        return List.copyOf(peers.values());
    }
}
