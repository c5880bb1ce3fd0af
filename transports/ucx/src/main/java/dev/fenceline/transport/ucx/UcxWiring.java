package dev.fenceline.transport.ucx;

import dev.fenceline.EndpointFailedException;
import dev.fenceline.FencelineException;
import dev.fenceline.spi.LaneCapabilities;
import dev.fenceline.transport.ucx.UcxLanePlanner.Candidate;
import dev.fenceline.transport.ucx.UcxLanePlanner.Planned;
import java.nio.ByteBuffer;
import java.security.SecureRandom;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import org.agrona.collections.Long2ObjectHashMap;
import org.agrona.concurrent.UnsafeBuffer;

/**
 * Wireup, on the progress agent: the peers this worker knows, the channels to and from them, the
 * connects on their way. An origin plans a connect's lanes from the two workers' ifaces (each lane
 * type to the first iface, in {@code tls} order, that reaches the peer and serves it), makes or
 * reuses a channel per iface and sends the CONNECT; a target makes its end of each channel and
 * answers ({@link UcxAcceptor}). The peers and channels, under every name they go by, are
 * {@link UcxPeers}; an origin's channels are made and dropped by {@link UcxOriginChannels}; its
 * connects, once sent, go to their end in {@link UcxDials}. See {@link UcxWireup} for the messages.
 */
final class UcxWiring implements UcxRecovery.Dialer<UcxLane> {
    private static final org.slf4j.Logger LOG = org.slf4j.LoggerFactory.getLogger(UcxWiring.class);
    private static final SecureRandom RANDOM = new SecureRandom();

    /** Ids of replacements' connects, apart from the actor's (which count up from 1). */
    private long nextReplacement = -1;

    private final UcxAgent agent;
    private final UcxSender sender;
    private final UcxTarget target;
    private final UcxSettings settings;
    private final UUID workerId;
    private final String workerName;
    private final List<UctIface> ifaces;
    private final byte[] localAddress;
    private final UcxWiringReports reports;
    private final UcxPeers peers;
    private final UcxAcceptor acceptor;
    private final UcxPeerWarnings warnings;
    private final UcxLeaving leaving;
    private final UcxOriginChannels origins;
    /** Origin lanes by connection id. */
    final Long2ObjectHashMap<UcxLane> lanes = new Long2ObjectHashMap<>();
    /** Connects on their way, to their end. */
    private final UcxDials dials;
    private final UnsafeBuffer scratch = new UnsafeBuffer(ByteBuffer.allocateDirect(64 << 10));
    /** Lanes given up by their endpoints but still wanted, being reconnected. */
    final UcxRecovery<UcxLane> recovery;
    private final UcxLanePlanner planner;

    UcxWiring(UcxAgent agent, UcxSender sender, UcxTarget target, UcxSettings settings, UUID workerId,
            String workerName, List<UctIface> ifaces, byte[] localAddress, UcxWiringReports reports) {
        this.agent = agent;
        this.sender = sender;
        this.target = target;
        this.settings = settings;
        this.workerId = workerId;
        this.workerName = workerName;
        this.ifaces = ifaces;
        this.localAddress = localAddress;
        this.reports = reports;
        this.peers = new UcxPeers(ifaces, UcxPeers.thisHost(), workerName, reports);
        this.origins = new UcxOriginChannels(peers, RANDOM);
        this.warnings = new UcxPeerWarnings(workerName);
        this.acceptor = new UcxAcceptor(agent, target, settings, workerName, ifaces, peers, this::send,
                this::forgetPeer);
        this.leaving = new UcxLeaving(agent, peers, workerId, workerName, this::send, this::forgetPeer);
        this.planner = new UcxLanePlanner(ifaces, settings, target.maxGet());
        this.recovery = new UcxRecovery<>(workerName, settings.reconnect(), settings.connectTimeout().toNanos(),
                System::nanoTime, RANDOM::nextLong, this);
        this.dials = new UcxDials(agent, peers, origins, reports, workerName, RANDOM, lanes, recovery,
                new UcxDials.Wiring() {
                    @Override
                    public void send(UcxChannel channel, UcxWireup.Message message) {
                        UcxWiring.this.send(channel, message);
                    }

                    @Override
                    public void bye(UcxLane lane) {
                        UcxWiring.this.bye(lane);
                    }

                    @Override
                    public void redial(UcxCommand.Dial command) {
                        dial(command);
                    }
                });
    }

    UcxChannel channel(long endpoint) {
        return peers.byEndpoint(endpoint);
    }

    // ------------------------------------------------------------------ origin

    /** Plans and sends a connect. */
    void dial(UcxCommand.Dial d) {
        try {
            dialOrFail(d);
        } catch (FencelineException e) {
            reports.dialFailed(d.dial(), e);
        } catch (RuntimeException e) {
            reports.dialFailed(d.dial(), new EndpointFailedException("ucx: cannot connect to " + d.peer() + ": " + e, e));
        }
    }

    private void dialOrFail(UcxCommand.Dial d) {
        UcxPeer known = peers.known(d.peer());
        if (known != null && !known.address.equals(d.address())) {
            // What is known of it (from a CONNECT naming that worker, its sender's word, or from an
            // earlier dial) contradicts the address this worker dials now, which is the caller's: a
            // worker's address never changes, so one of them is not that worker's. What was made on
            // the known one goes, and the dial goes where the caller said.
            agent.peerContradicted(known, new EndpointFailedException("ucx: a connect named worker " + d.peer()
                    + " with an address other than the one this worker dials it at"));
        }
        UcxPeer peer = peers.peer(d.peer(), d.address());
        peers.established(peer);
        List<Candidate> candidates = planner.candidates(peer);
        List<Planned> plan = planner.plan(candidates, peer);
        if (plan.isEmpty()) {
            throw new EndpointFailedException("ucx: no transport of " + settings.tls() + " on this worker reaches "
                    + d.peer() + " (its ifaces: " + peer.address.ifaceNames() + "; here: " + ifaces + ")");
        }
        Candidate wire = UcxLanePlanner.wireupCandidate(candidates,
                plan.stream().anyMatch(p -> UcxLanePlanner.sharedMemory(p.candidate().iface())));
        if (wire == null) {
            throw new EndpointFailedException("ucx: no transport of " + settings.tls() + " that connects to an"
                    + " interface and carries active messages reaches " + d.peer() + ", so no wireup can go there"
                    + " (add posix, tcp or ud to " + UcxSettings.SECTION + ".tls)");
        }
        List<UcxChannel> channels = new ArrayList<>();
        List<UcxWireup.Channel> wired = new ArrayList<>();
        UcxChannel wireup = origins.channel(peer, wire, UcxWireup.Mode.IFACE, channels, wired);
        List<UcxLane> made = new ArrayList<>();
        List<UcxWireup.Lane> lanesOut = new ArrayList<>();
        for (Planned p : plan) {
            UcxWireup.Mode mode = planner.mode(p.candidate().iface());
            UcxChannel ch = origins.channel(peer, p.candidate(), mode, channels, wired);
            long conn = RANDOM.nextLong();
            LaneCapabilities caps = planner.capabilities(p);
            UcxLane lane = new UcxLane(agent, conn, ch, p.types(), caps, planner.maxMessage(p, caps),
                    settings.queueDepth(), UcxLanePlanner.scope(p.candidate().iface(), peer), settings.directOperations());
            made.add(lane);
            lanesOut.add(new UcxWireup.Lane(conn, channels.indexOf(ch)));
        }
        for (UcxLane l : made) {
            lanes.put(l.conn, l);
            l.channel.lanes.add(l);
        }
        long onWire = dials.start(new UcxDialing(d.dial(), peer, made, channels, wired, null, false, d));
        send(wireup, new UcxWireup.Connect(onWire, workerId, localAddress, wired, lanesOut));
    }

    /**
     * Puts a new connection behind a lane's slot: a new channel on the same iface and a new
     * connection id, wired up as a connect is; once both are up, the lane's endpoint hears
     * {@code onReplaced} and binds the new one (and gives the old one up, which owes what its
     * revocation says). What a transport does when it rebuilds a connection; tests use it too.
     *
     * @param old the lane to replace
     */
    void replace(UcxLane old) {
        UcxChannel was = old.channel;
        if (lanes.get(old.conn) != old || was.state != UcxChannel.State.READY) {
            return; // gone, or failing: its failure is reported instead
        }
        UcxChannel carrier = was.peer.wireupChannel(UcxLanePlanner.sharedMemory(was.iface));
        Candidate wire = carrier == null ? null : new Candidate(carrier.ifaceIndex, carrier.peerIface, carrier.iface);
        if (wire == null) {
            LOG.warn("ucx {}: no wireup channel to {} is up; {} is not replaced", workerName, was.peer, old);
            return;
        }
        rebuild(old, wire, false, nextReplacement--, false);
    }

    /**
     * Starts a reconnect of a lane its endpoint gave up ({@link UcxRecovery}): as a replacement, but
     * on fresh channels only, the wireup's too (the channel that failed, or went silent, may have
     * been it), so nothing of the old path is reused.
     */
    @Override
    public long redial(UcxLane old) {
        UcxPeer peer = old.channel.peer;
        if (peer.dead || peers.known(peer.id) != peer) {
            return 0;
        }
        Candidate wire = UcxLanePlanner.wireupCandidate(planner.candidates(peer),
                UcxLanePlanner.sharedMemory(old.channel.iface));
        if (wire == null) {
            return 0;
        }
        long dial = nextReplacement--;
        try {
            rebuild(old, wire, true, dial, true);
        } catch (FencelineException e) { // UCT refused an endpoint (the path is down): the next attempt retries
            LOG.debug("ucx {}: reconnecting {}: {}", workerName, old, e.getMessage());
            return 0;
        }
        return dial;
    }

    /** The channels of a replacement or reconnect of {@code old}, and the CONNECT that wires them. */
    private void rebuild(UcxLane old, Candidate wire, boolean freshWireup, long dial, boolean recovering) {
        UcxChannel was = old.channel;
        UcxPeer peer = was.peer;
        List<UcxChannel> channels = new ArrayList<>();
        List<UcxWireup.Channel> wired = new ArrayList<>();
        UcxChannel wireup;
        UcxChannel fresh;
        try {
            wireup = origins.channel(peer, wire, UcxWireup.Mode.IFACE, channels, wired, freshWireup);
            boolean same = freshWireup && wire.local() == was.ifaceIndex && was.mode == UcxWireup.Mode.IFACE;
            fresh = same ? wireup : origins.channel(peer, new Candidate(was.ifaceIndex, was.peerIface, was.iface),
                    was.mode, channels, wired, true);
        } catch (FencelineException e) {
            for (int i = 0; i < channels.size(); i++) {
                if (wired.get(i).mode().made()) {
                    origins.drop(channels.get(i)); // made for this attempt, and used by nothing
                }
            }
            throw e;
        }
        UcxLane next = old.successor(RANDOM.nextLong(), fresh);
        lanes.put(next.conn, next);
        fresh.lanes.add(next);
        long onWire = dials.start(new UcxDialing(dial, peer, List.of(next), channels, wired, old, recovering, null));
        send(wireup, new UcxWireup.Connect(onWire, workerId, localAddress, wired,
                List.of(new UcxWireup.Lane(next.conn, channels.indexOf(fresh)))));
    }

    // ------------------------------------------------------------------ wireup messages

    private void send(UcxChannel ch, UcxWireup.Message m) {
        byte[] bytes = UcxWireup.encode(m);
        scratch.putBytes(0, bytes);
        // A refusal on a channel made for the refused connect goes to whoever sent it, whose word
        // nobody checked: it may wait, but it never makes a connected peer's channel fail for room.
        sender.send(ch, UcxWire.AM_WIREUP, scratch, bytes.length, !ch.refused);
    }

    /**
     * A wireup message as it came ({@code length} bytes at {@code offset}, valid during the call):
     * decoded, or dropped with a warning counted like the target's dropped requests (anyone can send one).
     */
    void onWireup(long iface, org.agrona.DirectBuffer buffer, int offset, int length) {
        UcxWireup.Message m;
        try {
            m = UcxWireup.decode(com.kenai.jffi.MemoryIO.getInstance().newDirectByteBuffer(buffer.addressOffset() + offset,
                    length));
        } catch (FencelineException e) {
            warnings.warn(() -> "dropped a malformed wireup message: " + e.getMessage());
            return;
        }
        boolean overSharedMemory = false;
        for (UctIface i : ifaces) {
            overSharedMemory |= i.handle == iface && UcxLanePlanner.sharedMemory(i);
        }
        onMessage(m, overSharedMemory);
    }

    /** A wireup message arrived (its bytes valid during the call), over shared memory or not. */
    void onMessage(UcxWireup.Message m, boolean overSharedMemory) {
        if (m instanceof UcxWireup.Connect c) {
            acceptor.onConnect(c, overSharedMemory);
        } else if (m instanceof UcxWireup.Connected c) {
            dials.onConnected(c);
        } else if (m instanceof UcxWireup.Refused r) {
            dials.onRefused(r);
        } else if (m instanceof UcxWireup.Hello h) {
            UcxChannel ch = peers.reply(h.channel());
            if (ch != null && ch.state != UcxChannel.State.FAILED) {
                ch.state = UcxChannel.State.READY;
                send(ch, new UcxWireup.HelloAck(h.channel()));
            }
        } else if (m instanceof UcxWireup.HelloAck h) {
            UcxChannel ch = peers.origin(h.channel());
            if (ch != null && ch.state == UcxChannel.State.WIRING) {
                ch.state = UcxChannel.State.READY;
                dials.check();
            }
        } else if (m instanceof UcxWireup.Bye b) {
            target.close(b.conn());
        } else if (m instanceof UcxWireup.Leaving l) {
            leaving.onLeaving(l);
        }
    }

    /** Tells every peer this worker is closing ({@link UcxLeaving#leaving}). */
    void leaving() {
        leaving.leaving();
    }

    /**
     * The actor's tick: greetings without an answer are said again (UCT's tcp may drop the first),
     * and failed lanes' reconnects go on.
     */
    void tick() {
        recovery.tick();
        for (UcxChannel ch : peers.origins()) {
            if (ch.state == UcxChannel.State.WIRING && ch.hellos > 0) {
                send(ch, new UcxWireup.Hello(ch.id));
                ch.hellos++;
            }
        }
    }

    /** A connect timed out: its lanes go, and the target is told. */
    @Override
    public void abandon(long dial) {
        dials.abandon(dial);
    }

    /** Tells the target a lane is closed, on the lane's channel (after its requests), else the wireup's. */
    void bye(UcxLane lane) {
        UcxChannel ch = lane.channel;
        if (!ch.iface.attributes().has(UctIfaceAttributes.AM_BCOPY) || !ch.ready()) {
            ch = lane.channel.peer.wireupChannel();
        }
        if (ch != null) {
            send(ch, new UcxWireup.Bye(lane.conn));
        }
    }

    // ------------------------------------------------------------------ failure

    /** Forgets a failed channel's bookkeeping (the agent failed its lanes). */
    void forgetChannel(UcxChannel ch) {
        peers.remove(ch);
        if (!ch.origin || ch.bothWays) {
            target.lost(ch);
        }
        dials.check();
    }

    /** @return the peer, or null */
    UcxPeer peerOf(UUID id) {
        return peers.known(id);
    }

    /** Forgets a peer whose channels all failed (its process is gone). */
    void forgetPeer(UcxPeer p) {
        if (p.watched) {
            p.watched = false;
            if (!agent.closed()) { // closing, the transport actor goes too: nothing to tell it
                reports.peerForgotten(p.id);
            }
        }
        peers.remove(p);
        target.peerGone(p);
        UcxPeers.unmapTable(p);
    }

    /** @return every channel, for the agent's close */
    List<UcxChannel> allChannels() {
        return peers.allChannels();
    }

    /** @return every peer */
    List<UcxPeer> allPeers() {
        return peers.allPeers();
    }
}
