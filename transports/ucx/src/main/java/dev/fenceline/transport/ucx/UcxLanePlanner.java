package dev.fenceline.transport.ucx;

import dev.fenceline.LaneType;
import dev.fenceline.spi.LaneCapabilities;
import java.util.ArrayList;
import java.util.EnumSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * Which lanes a connect to a peer makes, from this worker's ifaces and the peer's address: the
 * candidates (an iface here that reaches one of the peer's), the lane types each serves, the
 * wireup's iface, how each channel connects, and each lane's capabilities and exactly-once scope.
 * Functions of the ifaces' attributes and the settings; the wiring makes the channels and lanes.
 */
final class UcxLanePlanner {
    private final List<UctIface> ifaces;
    private final UcxSettings settings;
    private final int maxGet;

    /**
     * @param ifaces this worker's ifaces, in the order of tls
     * @param settings the transport's settings
     * @param maxGet the largest get one reply carries here
     */
    UcxLanePlanner(List<UctIface> ifaces, UcxSettings settings, int maxGet) {
        this.ifaces = ifaces;
        this.settings = settings;
        this.maxGet = maxGet;
    }

    /**
     * The wireup's candidate. A target makes channels on its shared memory only for a CONNECT that
     * came over shared memory (which only a process of its user can write: {@link UcxAcceptor}), so
     * a CONNECT that makes one goes over shared memory; any other over the first candidate (a peer of
     * this host under another user reaches no shared memory of this worker's, whatever UCT says).
     *
     * @param sharedMemory whether the CONNECT makes a channel on shared memory
     * @return the first candidate (on shared memory, if so) that connects to an interface and carries
     *     active messages, else the first such candidate, or null
     */
    static Candidate wireupCandidate(List<Candidate> candidates, boolean sharedMemory) {
        Candidate first = null;
        for (Candidate c : candidates) {
            UctIfaceAttributes a = c.iface().attributes();
            if (a.has(UctIfaceAttributes.CONNECT_TO_IFACE) && a.has(UctIfaceAttributes.AM_BCOPY)) {
                if (!sharedMemory || sharedMemory(c.iface())) {
                    return c;
                }
                first = first == null ? c : first;
            }
        }
        return first;
    }

    /** @return whether the iface is shared memory (posix, sysv, cma, ...), which reaches peers of this host only */
    static boolean sharedMemory(UctIface iface) {
        return iface.resource().deviceType().equals("shm");
    }

    /**
     * @param p a planned lane
     * @param caps its capabilities
     * @return the largest active message it carries: max-fragment where its iface carries messages
     *     (a larger one than a UCT message goes in parts), else its largest payload
     */
    int maxMessage(Planned p, LaneCapabilities caps) {
        return p.candidate().iface().attributes().has(UctIfaceAttributes.AM_BCOPY)
                ? Math.max(settings.maxFragment(), caps.maxPayload()) : caps.maxPayload();
    }

    /** @return how a channel on the iface connects: endpoint to endpoint where it must, or where configured */
    UcxWireup.Mode mode(UctIface iface) {
        UctIfaceAttributes a = iface.attributes();
        boolean toIface = a.has(UctIfaceAttributes.CONNECT_TO_IFACE);
        boolean toEndpoint = a.has(UctIfaceAttributes.CONNECT_TO_EP);
        return toEndpoint && (!toIface || settings.connectToEndpoint()) ? UcxWireup.Mode.ENDPOINT : UcxWireup.Mode.IFACE;
    }

    /**
     * One of this worker's ifaces that reaches one of the peer's.
     *
     * @param local its index here
     * @param remote the peer iface's index in the peer's address
     * @param iface the iface
     */
    record Candidate(int local, int remote, UctIface iface) {
    }

    /** A lane in the plan: its iface and the lane types it serves. */
    record Planned(Candidate candidate, Set<LaneType> types, UcxPeer peer) {
    }

    /** @return for each of this worker's ifaces, the first of the peer's it reaches, in the order of tls */
    List<Candidate> candidates(UcxPeer peer) {
        List<Candidate> out = new ArrayList<>();
        List<UcxAddress.Iface> theirs = peer.address.ifaces();
        for (int i = 0; i < ifaces.size(); i++) {
            UctIface mine = ifaces.get(i);
            for (int j = 0; j < theirs.size(); j++) {
                UcxAddress.Iface t = theirs.get(j);
                if (t.transport().equals(mine.resource().transport()) && mine.reachable(t.address())) {
                    out.add(new Candidate(i, j, mine));
                    break;
                }
            }
        }
        return out;
    }

    /**
     * Each lane type to the first candidate that serves it: messages where the iface carries them;
     * RMA and atomics through the hardware where the iface's memory domain guards it (a key the
     * adapter checks, or the owner's key table on this host), else as messages; bulk transfers
     * through zero-copy hardware first.
     */
    List<Planned> plan(List<Candidate> candidates, UcxPeer peer) {
        Map<Candidate, Set<LaneType>> chosen = new java.util.LinkedHashMap<>();
        for (LaneType t : LaneType.values()) {
            Candidate best = null;
            if (t == LaneType.RMA_BW) {
                for (Candidate c : candidates) {
                    UctIfaceAttributes a = c.iface().attributes();
                    if (a.has(UctIfaceAttributes.PUT_ZCOPY) && a.has(UctIfaceAttributes.GET_ZCOPY) && guarded(c, peer)) {
                        best = c;
                        break;
                    }
                }
            }
            for (int k = 0; best == null && k < candidates.size(); k++) {
                Candidate c = candidates.get(k);
                if (serves(c, t, peer)) {
                    best = c;
                }
            }
            if (best != null) {
                chosen.computeIfAbsent(best, k -> EnumSet.noneOf(LaneType.class)).add(t);
            }
        }
        List<Planned> out = new ArrayList<>();
        chosen.forEach((c, types) -> out.add(new Planned(c, types, peer)));
        return out;
    }

    private static boolean serves(Candidate c, LaneType t, UcxPeer peer) {
        UctIfaceAttributes a = c.iface().attributes();
        boolean messages = a.has(UctIfaceAttributes.AM_BCOPY);
        return switch (t) {
            case AM -> messages;
            case RMA, RMA_BW -> messages || hardwareRma(a) && guarded(c, peer);
            case AMO -> messages || !a.atomics(8).isEmpty() && guarded(c, peer);
        };
    }

    private static boolean hardwareRma(UctIfaceAttributes a) {
        return a.has(UctIfaceAttributes.PUT_SHORT | UctIfaceAttributes.PUT_BCOPY | UctIfaceAttributes.PUT_ZCOPY)
                && a.has(UctIfaceAttributes.GET_SHORT | UctIfaceAttributes.GET_BCOPY | UctIfaceAttributes.GET_ZCOPY);
    }

    /** Whether the iface's hardware reaches memory only by a check: an adapter's key, or the owner's table. */
    private static boolean guarded(Candidate c, UcxPeer peer) {
        boolean memory = c.iface().resource().deviceType().equals("shm");
        return memory ? peer.table != null
                : c.iface().attributes().keyedMemory();
    }

    /** @return what a planned lane can do, from its iface's attributes and what guards its memory */
    LaneCapabilities capabilities(Planned p) {
        UctIface iface = p.candidate().iface();
        UctIfaceAttributes a = iface.attributes();
        boolean messages = a.has(UctIfaceAttributes.AM_BCOPY);
        int software = messages ? Math.min(UcxWire.softwarePayload(a.amMaxBcopy()), maxGet) : 0;
        boolean hardware = hardwareRma(a) && guarded(p.candidate(), p.peer())
                && (p.types().contains(LaneType.RMA) || p.types().contains(LaneType.RMA_BW));
        long hw = 0;
        if (hardware) {
            long put = Math.max(Math.max(a.has(UctIfaceAttributes.PUT_SHORT) ? a.putMaxShort() : 0,
                    a.has(UctIfaceAttributes.PUT_BCOPY) ? a.putMaxBcopy() : 0),
                    a.has(UctIfaceAttributes.PUT_ZCOPY) ? a.putMaxZcopy() : 0);
            long get = Math.max(Math.max(a.has(UctIfaceAttributes.GET_SHORT) ? a.getMaxShort() : 0,
                    a.has(UctIfaceAttributes.GET_BCOPY) ? a.getMaxBcopy() : 0),
                    a.has(UctIfaceAttributes.GET_ZCOPY) ? a.getMaxZcopy() : 0);
            hw = Math.min(put, get);
        }
        // Every operation must fit the path it may take: a region the hardware cannot reach goes by
        // message, so a lane that carries messages splits at their size.
        long max = messages ? (hardware ? Math.min(hw, software) : software) : hw;
        int payload = (int) Math.max(1, Math.min(max, settings.maxFragment()));
        boolean atomics = p.types().contains(LaneType.AMO) && guarded(p.candidate(), p.peer());
        Set<dev.fenceline.AtomicOp> a32 = atomics ? a.atomics(4) : Set.of();
        Set<dev.fenceline.AtomicOp> a64 = atomics ? a.atomics(8) : Set.of();
        boolean dedup = scope(iface, p.peer()) != null;
        boolean zcopyOnly = !messages && hardware && !a.has(UctIfaceAttributes.PUT_SHORT | UctIfaceAttributes.PUT_BCOPY);
        return new LaneCapabilities(0, zcopyOnly ? 0 : payload, zcopyOnly ? payload : 0, false, a32, a64,
                atomics && a.compareAndSwap(), true, dedup);
    }

    /**
     * Lanes on this host (shared memory, cross-memory attach) share the peer's exactly-once scope:
     * what their hardware has in flight when they fail is a put or get (cma's zero-copy completes in
     * the iface's progress), which may be sent again, and everything else is a software request,
     * which the target's windows recognize. An adapter's lane may leave a hardware atomic in flight,
     * which no window would recognize: no scope.
     */
    static Object scope(UctIface iface, UcxPeer peer) {
        String type = iface.resource().deviceType();
        boolean synchronous = type.equals("shm") || type.equals("self");
        boolean hardware = hardwareRma(iface.attributes()) || !iface.attributes().atomics(8).isEmpty();
        return synchronous || !hardware || !iface.attributes().keyedMemory()
                ? new dev.fenceline.spi.support.ExactlyOnceScope(peer.id, dev.fenceline.spi.support.ExactlyOnceWindows.MEMBER)
                : null;
    }
}
