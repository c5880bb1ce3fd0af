package dev.fenceline.transport.ucx;

import dev.fenceline.EndpointFailedException;
import dev.fenceline.FencelineException;
import java.security.SecureRandom;
import java.util.List;
import org.agrona.collections.Long2ObjectHashMap;

/**
 * The origin's connects on their way, on the progress agent: each from its CONNECT to its end. A
 * CONNECTED whose bounds fit the lanes connects the channels it names and greets them; once every
 * channel of a connect is up, its endpoint, reconnect or replacement hears so. A refusal, a failed
 * channel or the actor's timeout ends it: its lanes go (the target hears BYE), and whoever started
 * it hears why. {@link UcxWiring} starts them and routes the wireup messages here.
 */
final class UcxDials {
    private static final org.slf4j.Logger LOG = org.slf4j.LoggerFactory.getLogger(UcxDials.class);

    /** What a connect's end needs from the rest of the wiring. */
    interface Wiring {
        /** Sends a wireup message on a channel. */
        void send(UcxChannel channel, UcxWireup.Message message);

        /** Tells the target a lane is closed ({@link UcxWiring#bye}). */
        void bye(UcxLane lane);

        /** Dials an endpoint's connect again, from the start. */
        void redial(UcxCommand.Dial command);
    }

    private final UcxAgent agent;
    private final UcxPeers peers;
    private final UcxOriginChannels origins;
    private final UcxWiringReports reports;
    private final String workerName;
    private final SecureRandom random;
    private final Wiring wiring;
    /** Origin lanes by connection id (the wiring's, which a connect's end takes its lanes out of). */
    private final Long2ObjectHashMap<UcxLane> lanes;
    /** Connects on their way, by the id their CONNECT carries. */
    private final Long2ObjectHashMap<UcxDialing> dials = new Long2ObjectHashMap<>();
    /** Reconnects of lanes given up by their endpoints: told how theirs ended. */
    private final UcxRecovery<UcxLane> recovery;

    UcxDials(UcxAgent agent, UcxPeers peers, UcxOriginChannels origins, UcxWiringReports reports, String workerName,
            SecureRandom random, Long2ObjectHashMap<UcxLane> lanes, UcxRecovery<UcxLane> recovery, Wiring wiring) {
        this.agent = agent;
        this.peers = peers;
        this.origins = origins;
        this.reports = reports;
        this.workerName = workerName;
        this.random = random;
        this.lanes = lanes;
        this.recovery = recovery;
        this.wiring = wiring;
    }

    /**
     * Keeps a connect whose CONNECT is about to go.
     *
     * @return the id its CONNECT carries: drawn at random, since UCT does not say who sent a message,
     *     so an answer that could name a connect by a counter could be forged by anyone reaching this
     *     worker's iface
     */
    long start(UcxDialing d) {
        long w;
        do {
            w = random.nextLong();
        } while (dials.containsKey(w));
        dials.put(w, d);
        return w;
    }

    /** @return the connects on their way (agent thread) */
    int count() {
        return dials.size();
    }

    /** The target took a connect: its channels are connected and greeted, or it fails on bounds that do not fit. */
    void onConnected(UcxWireup.Connected m) {
        UcxDialing d = dials.get(m.dial());
        if (d == null || d.answered) {
            return; // abandoned (timed out), or a peer repeating itself
        }
        boolean[] messages = new boolean[d.lanes.size()];
        for (int i = 0; i < messages.length; i++) {
            messages[i] = d.lanes.get(i).carriesMessages();
        }
        String unusable = m.unusableFor(messages);
        if (unusable != null) {
            // As a connect that timed out (abandon): the target took it, so its lanes go by BYE on their
            // channels, which stay for later connects.
            dials.remove(m.dial());
            forget(d);
            peers.neverReverseUnproven(d.reversed);
            failed(d, d.peer + " answered the connect with " + unusable);
            return;
        }
        d.answered = true;
        for (int i = 0; i < d.lanes.size(); i++) {
            d.lanes.get(i).limitGets(m.maxGets().get(i)); // before the endpoint has the lane
        }
        for (UcxChannel ch : d.reversed) {
            peers.bothWays(ch); // the peer took it as its own: never marked unproven from now on
        }
        for (UcxWireup.End e : m.ends()) {
            UcxChannel ch = peers.origin(e.id());
            if (ch == null || !d.channels.contains(ch) || ch.state != UcxChannel.State.WIRING) {
                continue;
            }
            try {
                ch.ep.connectTo(d.peer.address.ifaces().get(ch.peerIface).address(), e.endpoint());
                wiring.send(ch, new UcxWireup.Hello(ch.id));
                ch.hellos = 1;
            } catch (FencelineException refused) {
                agent.channelFailed(ch, new EndpointFailedException("ucx: cannot connect " + ch + ": "
                        + refused.getMessage()), false);
            }
        }
        check();
    }

    /** The target refused a connect: it ends, or an endpoint's connect is dialed again where that helps. */
    void onRefused(UcxWireup.Refused r) {
        UcxDialing d = dials.remove(r.dial());
        if (d == null) {
            return;
        }
        forget(d);
        for (UcxChannel ch : d.made) { // the target ended its side of each with the refusal
            if (ch.lanes.isEmpty()) {
                origins.drop(ch);
            } else { // another connect's lanes went on it meanwhile: they cannot live there
                agent.channelFailed(ch, new EndpointFailedException("ucx: " + d.peer + " refused the connect"
                        + " that made " + ch + ": " + UcxWireup.printable(r.reason())), false);
            }
        }
        if (r.notOwnChannel() && redialed(d)) {
            return; // dialed again, on channels of its own
        }
        failed(d, d.peer + " refused the connect: " + UcxWireup.printable(r.reason()));
    }

    /**
     * The peer refused a connect as a channel it named REVERSE is not the peer's (a third worker may
     * have made it here in the peer's name, or the peer no longer has its end): one the peer took
     * before fails, none it never took carries lanes from now on, and an endpoint's connect is dialed
     * again at once, on channels of its own.
     *
     * @return whether it was dialed again
     */
    private boolean redialed(UcxDialing d) {
        for (UcxChannel ch : d.reversed) {
            if (ch.bothWays) {
                agent.channelFailed(ch, new EndpointFailedException("ucx: " + d.peer + " no longer has " + ch), false);
            }
        }
        peers.neverReverseUnproven(d.peer.replyChannels.values());
        if (d.command == null) {
            return false;
        }
        LOG.debug("ucx {}: {} refused a connect on a channel it dialed; dialing again", workerName, d.peer);
        wiring.redial(d.command);
        return true;
    }

    /** Completes each answered connect whose channels are all up, and ends each with a failed channel. */
    void check() {
        for (Long2ObjectHashMap<UcxDialing>.ValueIterator it = dials.values().iterator(); it.hasNext();) {
            UcxDialing d = it.next();
            if (!d.answered) {
                continue;
            }
            boolean failed = d.channels.stream().anyMatch(c -> c.state == UcxChannel.State.FAILED);
            boolean ready = d.channels.stream().allMatch(UcxChannel::ready);
            if (failed) {
                it.remove();
                forget(d);
                if (d.replaces == null || d.recovery) { // a replacement's failed channel said so already
                    failed(d, "a channel to " + d.peer + " failed during the connect");
                }
            } else if (ready) {
                it.remove();
                if (d.replaces == null) {
                    reports.dialed(d.dial, List.copyOf(d.lanes));
                } else if (!d.recovery) {
                    d.replaces.replacedBy(d.lanes.get(0));
                } else if (recovery.succeeded(d.replaces, d.lanes.get(0))) {
                    LOG.info("ucx {}: reconnected {} as {}", workerName, d.replaces, d.lanes.get(0));
                    d.replaces.recoveredBy(d.lanes.get(0));
                } else {
                    d.lanes.get(0).close();
                }
            }
        }
    }

    /** A connect timed out ({@code dial} is the actor's or the recovery's id): its lanes go, and the target is told. */
    void abandon(long dial) {
        for (Long2ObjectHashMap<UcxDialing>.ValueIterator it = dials.values().iterator(); it.hasNext();) {
            UcxDialing d = it.next();
            if (d.dial == dial) {
                it.remove();
                forget(d);
                peers.neverReverseUnproven(d.reversed); // the peer never took them: the next connect makes its own
                return;
            }
        }
    }

    /** A connect failed: its endpoint's connect, a reconnect or a replacement hears why. */
    private void failed(UcxDialing d, String why) {
        if (d.replaces == null) {
            reports.dialFailed(d.dial, new EndpointFailedException("ucx: " + why));
        } else if (d.recovery) {
            recovery.failed(d.replaces, why);
        } else {
            LOG.warn("ucx {}: the replacement of {} failed: {}", workerName, d.replaces, why);
        }
    }

    private void forget(UcxDialing d) {
        for (UcxLane l : d.lanes) {
            lanes.remove(l.conn);
            l.channel.lanes.remove(l);
            wiring.bye(l);
            l.forgotten();
        }
        if (d.recovery) { // its channels were made for it: a failed reconnect leaves no endpoint behind
            for (UcxChannel ch : d.channels) {
                if (ch.lanes.isEmpty()) {
                    origins.drop(ch);
                }
            }
        }
    }
}
