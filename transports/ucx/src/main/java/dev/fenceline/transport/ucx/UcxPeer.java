package dev.fenceline.transport.ucx;

import java.util.ArrayList;
import java.util.List;
import java.util.UUID;

/**
 * What this worker's progress agent knows of one peer worker: its address, its key table as this
 * process mapped it (peers on this host), the channels to it and from it. Progress agent only.
 */
final class UcxPeer {
    final UUID id;
    UcxAddress address;
    /** The peer's key table, mapped; null if it keeps none, or it is not on this host. */
    KeyTable.View table;
    /** The unpacked key that maps the table (released when the peer is forgotten, unless published). */
    UctRemoteKey tableKey;
    /**
     * Whether a mapping that checks against the table went to calling threads (the fast path): then
     * the table stays mapped as long as the process, as the mapping's region does, since a thread
     * may be inside a check when the peer goes.
     */
    boolean tablePublished;
    /**
     * Channels carrying this worker's requests to the peer: those it dialed, and those the peer
     * dialed that carry them too ({@link UcxChannel#bothWays}, also among {@link #replyChannels}).
     */
    final List<UcxChannel> originChannels = new ArrayList<>();
    /** Channels carrying this worker's replies to the peer's requests, by the peer's channel id. */
    final org.agrona.collections.Long2ObjectHashMap<UcxChannel> replyChannels =
            new org.agrona.collections.Long2ObjectHashMap<>();
    /** Connections the peer holds here. */
    int incoming;
    /** Bytes its messages arriving in parts hold at this worker's target (the progress agent's). */
    long assembling;
    /** Bytes of answers and wireup waiting for room on the channels to it ({@link UcxSender}). */
    long backlogBytes;
    /** The peer's process is gone: what it was sent will never be applied from now on. */
    boolean dead;
    /** Whether its process was reported to be watched ({@link UcxPeers#established}). */
    boolean watched;

    UcxPeer(UUID id, UcxAddress address) {
        this.id = id;
        this.address = address;
    }

    /** @return whether nothing of it is left here: no channel either way, no connection it holds */
    boolean unused() {
        return originChannels.isEmpty() && replyChannels.isEmpty() && incoming == 0;
    }

    /** @return a ready origin channel to the peer's iface that carries messages (for wireup), or null */
    UcxChannel wireupChannel() {
        return wireupChannel(false);
    }

    /**
     * @param sharedMemory whether it is to carry a CONNECT that makes a channel on shared memory
     *     ({@link UcxLanePlanner#wireupCandidate}): then only one on shared memory
     * @return a ready origin channel to the peer's iface that carries messages, or null
     */
    UcxChannel wireupChannel(boolean sharedMemory) {
        for (UcxChannel c : originChannels) {
            if (c.ready() && c.mode == UcxWireup.Mode.IFACE && c.iface.attributes().has(UctIfaceAttributes.AM_BCOPY)
                    && (!sharedMemory || UcxLanePlanner.sharedMemory(c.iface))) {
                return c;
            }
        }
        return null;
    }

    /**
     * @return a ready or wiring channel on the iface in that mode that carries this worker's lanes
     *     (one it dialed, or one the peer dialed that carries them too), or null
     */
    UcxChannel originChannel(int ifaceIndex, UcxWireup.Mode mode) {
        for (UcxChannel c : originChannels) {
            if (c.ifaceIndex == ifaceIndex && c.mode == mode && c.state != UcxChannel.State.FAILED) {
                return c;
            }
        }
        return null;
    }

    @Override
    public String toString() {
        return "worker " + id;
    }
}
