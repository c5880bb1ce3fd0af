package dev.fenceline.transport.shm;

import dev.fenceline.affinity.CpuAffinity;
import dev.fenceline.spi.support.Heartbeat;
import dev.fenceline.spi.support.Host;
import dev.fenceline.EndpointFailedException;
import dev.fenceline.FencelineException;
import dev.fenceline.RemoteKey;
import dev.fenceline.spi.LaneConnection;
import dev.fenceline.spi.SharedMemory;
import dev.fenceline.spi.Transport;
import dev.fenceline.spi.TransportActors;
import dev.fenceline.spi.TransportContext;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.security.SecureRandom;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ConcurrentHashMap;
import org.agrona.concurrent.Agent;
import org.apache.pekko.actor.typed.ActorRef;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One worker's shared-memory transport: its control segment (inbox ring), the data segments behind
 * its regions, the peer segments it mapped, and one polling loop (an Agrona {@link Agent} the runtime
 * runs on a thread of its own, never an actor-system thread) that serves the inbox: answers to this
 * worker's lanes go to their endpoints, requests from peers go to the target side
 * ({@link ShmTarget}), which applies them to this worker's memory at most once and answers in
 * order, and peers whose worker closed or whose process died fail their lanes.
 */
final class ShmTransport implements Transport, Agent, ShmTransportActor.Backend, dev.fenceline.spi.FailStop {
    private static final Logger LOG = LoggerFactory.getLogger(ShmTransport.class);
    private static final SecureRandom RANDOM = new SecureRandom();

    private final TransportContext context;
    private final ShmSettings settings;
    private final Path directory;
    private final String prefix;
    private final Inbox inbox;
    private final Path inboxFile;
    /** Its regions' segments, their key slots, and the peers' data segments it mapped. */
    private final ShmMemory memory;
    /** The peer workers' control segments kept mapped. */
    private final ShmPeerSegments peers;
    /** Polling thread: the peer inboxes as of {@link #inboxesSeen}; an array, so a pass allocates no iterator. */
    private Inbox[] inboxes = new Inbox[0];
    private int inboxesSeen;
    /** Polling thread: the inbox's reader. */
    private final ShmInboxReader messages;
    /** Origin side: this worker's lanes by connection id. */
    private final ShmLaneTable lanes = new ShmLaneTable();
    /** Connections whose CONNECT is out: their CONNECTED goes to the transport actor, any other is dropped. */
    private final Set<Long> dialing = ConcurrentHashMap.newKeySet();
    /** The control actor; set by {@link #start}. */
    private volatile ActorRef<ShmTransportActor.Command> actor;
    /** Origin side: gate slots in use, and those to free once the peer left them. */
    private final ShmGateSlots gateSlots;
    /** The target side: requests from peers, applied and answered on the polling thread. */
    private final ShmTarget target;
    /** Whether endpoints get the cross-memory-attach lane. */
    private final boolean cma;
    private final Set<CmaLane> cmaLanes = ConcurrentHashMap.newKeySet();
    /** Peers found stopped or gone: their lanes fail on the polling thread. */
    private final ShmPeerLoss losses;
    /** When a record a dead producer left half-written in the inbox is skipped. */
    private final HalfWrittenRule halfWritten;
    /** What happens when a process that maps this worker's inbox writes it outside the ring's protocol. */
    private final InboxFailStop failStop;
    /** Reads the inbox from a head of its own (polling thread). */
    private final InboxFraming framing;
    private volatile boolean closed;

    ShmTransport(TransportContext context, ShmSettings settings) {
        int window = context.windows().windowSize();
        if (window < settings.queueDepth()) { // a lane's operations past the window would each be refused
            throw new dev.fenceline.ConfigurationException("fenceline.exactly-once.window = " + window
                    + " is invalid with shm's queue-depth = " + settings.queueDepth() + ": expected at least it, so"
                    + " every operation a lane can hold fits");
        }
        CpuAffinity.checkProcessMayRun(settings.pollingCpus(), ShmSettings.SECTION + ".polling-cpus");
        this.context = context;
        this.settings = settings;
        this.directory = settings.directory();
        this.halfWritten = new HalfWrittenRule(settings.unblockAfter().toNanos());
        if (!Files.isDirectory(directory) || !Files.isWritable(directory)) {
            throw new FencelineException("shm: " + directory + " is not a writable directory ("
                    + ShmSettings.SECTION + ".directory); shared memory is unavailable here");
        }
        Segments.removeStale(directory);
        this.prefix = Segments.processPrefix() + context.workerId().toString().substring(0, 8) + "-";
        this.inboxFile = directory.resolve(prefix + Segments.unguessable() + "-ctl");
        try {
            this.inbox = Inbox.create(inboxFile, settings.ringSize(), settings.maxRegistrations(), settings.maxLanes(),
                    context.workerId(), settings.sealedSegments());
        } catch (IOException e) {
            throw new FencelineException("shm: cannot create the control segment " + inboxFile + ": " + e, e);
        }
        try { // a worker that never started leaves no segment (a sealed one's descriptor with it)
            this.framing = new InboxFraming(inbox.ring, 0);
            this.gateSlots = new ShmGateSlots(inbox.gates, context.workerName(), settings.maxLanes());
            this.attention = new ShmAttention(inbox.gates.slots(), inbox.doorbell::ring);
            this.peers = new ShmPeerSegments(directory, settings.sealedSegments(), settings.maxPeers(), kept -> {
                inbox.doorbell.ring();
                ActorRef<ShmTransportActor.Command> a = actor;
                if (a != null) {
                    a.tell(new ShmTransportActor.PeerSeen(kept)); // its process is watched from now on
                }
            });
            ShmInboxReader.Drops drops = new ShmInboxReader.Drops(context.workerName());
            this.target = new ShmTarget(context, settings, peers::map, peers::adopt, peers::discard, drops::dropped);
            this.messages = new ShmInboxReader(lanes::find, dialing, () -> actor, target, drops);
            this.losses = new ShmPeerLoss(context.workerName(), lanes.all(), cmaLanes, target, inbox.doorbell::ring);
            Heartbeat.start(inbox);
            String noCma = settings.cma() ? Cma.unavailable() : "switched off (" + ShmSettings.SECTION + ".cma = off)";
            this.cma = noCma == null;
            if (!cma) {
                LOG.debug("shm {}: no cross-memory-attach lane: {}", context.workerName(), noCma);
            }
            this.memory = new ShmMemory(context, settings, prefix, inbox, cma, () -> actor);
            this.failStop = new InboxFailStop(context.workerName(), inbox, lanes, () -> actor);
        } catch (RuntimeException | Error e) {
            Segments.remove(inboxFile);
            throw e;
        }
    }

    /**
     * The polling loop: the runtime runs it on a thread of its own, with this transport's idle
     * strategy; with {@code doorbell} (and futexes), it sleeps on the inbox's doorbell when idle.
     */
    @Override
    public List<dev.fenceline.spi.ProgressAgent> progressAgents() {
        if (!settings.idleStrategy().equals("doorbell")) {
            return List.of(new dev.fenceline.spi.ProgressAgent(this, settings.idler()));
        }
        if (!Doorbell.available()) {
            LOG.info("shm {}: the polling thread parks when idle instead of sleeping on a doorbell: {}",
                    context.workerName(), Futex.unavailable());
            return List.of(new dev.fenceline.spi.ProgressAgent(this, settings.idler()));
        }
        return List.of(new dev.fenceline.spi.ProgressAgent(this, settings.idler(), new InboxWakeup(inbox.doorbell,
                this::look, settings.idleParkMax().toNanos(), settings.livenessInterval().toNanos())));
    }

    /** Polling thread: the inbox's producer position at the start of the last pass. */
    private long producerSeen;
    /**
     * Polling thread, with the doorbell armed, before it sleeps: whether anything came since the
     * last pass, or waits there to be polled again, or nothing at all.
     */
    private InboxWakeup.Idleness look() {
        long produced = inbox.ring.producerPosition();
        if (produced != producerSeen || attention.queued() || !leaving.isEmpty() || losses.pending()
                || peers.changes() != inboxesSeen) {
            return InboxWakeup.Idleness.WORK;
        }
        if (produced != framing.position() || attention.attending() || halfWritten.asked()) {
            return InboxWakeup.Idleness.POLL_AGAIN; // a claimed record not committed yet; lanes that asked for attention
        }
        for (Inbox o : inboxes) {
            if (!o.backlog.isEmpty()) {
                return InboxWakeup.Idleness.POLL_AGAIN; // replies waiting for room in a peer's ring
            }
        }
        return InboxWakeup.Idleness.QUIET;
    }

    /** @return this worker's gates, in its control segment */
    Gates gates() {
        return inbox.gates;
    }

    @Override
    public String roleName() {
        return "fenceline-shm-" + context.workerName();
    }

    /** The polling thread, at its start: kept to {@code polling-cpus} if they are named. */
    @Override
    public void onStart() {
        CpuAffinity.keepThisThreadTo(settings.pollingCpus(), "shm " + context.workerName() + ": the polling thread");
    }

    @Override
    public String name() {
        return ShmTransportProvider.NAME;
    }

    /** Boot id, pid, process start time, control segment name: what a peer needs, and checks. */
    @Override
    public byte[] localAddress() {
        return new ShmAddress(Host.bootId() + " " + Host.pidNamespaceId(), Host.pid(), Host.startTime(), inbox.name)
                .encode();
    }

    // ------------------------------------------------------------------ memory

    @Override
    public SharedMemory allocateShared(long bytes) {
        return memory.allocate(bytes);
    }

    @Override
    public dev.fenceline.spi.RegionHandle registerRegion(ByteBuffer region) {
        return memory.register(region);
    }

    @Override
    public void keyUnpacked(RemoteKey key) {
        memory.peerSegment(key);
    }

    /** @return this process's mapping of the key's segment, or null if it is not reachable directly */
    DataSegment.Peer peerSegment(RemoteKey key) {
        return memory.peerSegment(key);
    }

    // ------------------------------------------------------------------ wireup

    @Override
    public void start(TransportActors actors) {
        actor = actors.spawn(ShmTransportActor.create(this, settings.livenessInterval(), settings.connectTimeout(),
                settings.quarantine(), Inbox::serving, new ShmPeerActor.StallWatch(Inbox::heartbeat,
                        context.livenessTimeout(), System::nanoTime)), "control");
    }

    /** Connecting is the transport actor's: it writes the CONNECT, and waits for the answer by a timer. */
    @Override
    public CompletionStage<List<LaneConnection>> connect(UUID peerId, byte[] peerAddress) {
        ActorRef<ShmTransportActor.Command> a = actor;
        if (a == null) {
            return CompletableFuture.failedFuture(new EndpointFailedException("shm: worker '" + context.workerName()
                    + "' never started this transport (the worker actor starts it)"));
        }
        if (closed) {
            return CompletableFuture.failedFuture(new EndpointFailedException("shm: the transport is closed"));
        }
        if (failStop.stopped()) {
            return CompletableFuture.failedFuture(failStop.failure());
        }
        CompletableFuture<List<LaneConnection>> result = new CompletableFuture<>();
        a.tell(new ShmTransportActor.Connect(peerId, peerAddress.clone(), result));
        return result;
    }

    @Override
    public String workerName() {
        return context.workerName();
    }

    /** Transport actor: maps the peer's inbox, takes a gate, and writes the CONNECT. */
    @Override
    public ShmTransportActor.Dial dial(UUID peerId, byte[] peerAddress) {
        if (failStop.stopped()) { // a connect queued before the break
            throw failStop.failure();
        }
        Inbox peer = peers.ofAddress(peerAddress);
        long conn = RANDOM.nextLong();
        int gate = gateSlots.open(conn);
        // A message this side writes must fit the peer's ring too (its largest message), whatever
        // its CONNECTED claims later.
        int fragment = Math.min(settings.maxFragment(), peer.ring.maxMsgLength() - ShmSettings.MESSAGE_OVERHEAD);
        ShmLane lane = new ShmLane(this, conn, gate, peer, settings.queueDepth(), fragment, cma);
        dialing.add(conn);
        lanes.add(lane);
        if (failStop.stopped()) { // broke meanwhile: the polling thread's sweep of the lanes may have missed this one
            abandon(new ShmTransportActor.Dial(conn, peer, lane));
            throw failStop.failure();
        }
        byte[] name = inbox.name.getBytes(StandardCharsets.UTF_8);
        int at = peer.ring.tryClaim(ShmWire.CONNECT, ShmRecords.connectLength(name));
        if (at < 0) {
            abandon(new ShmTransportActor.Dial(conn, peer, lane));
            throw new EndpointFailedException("shm: the inbox of " + peer.name + " is full; the peer is not"
                    + " keeping up");
        }
        ShmRecords.connect(peer.ring.buffer(), at, conn, context.workerId(), gate, name);
        try {
            peer.ring.commit(at);
        } catch (IllegalStateException e) { // the peer changed the record's header meanwhile: its ring is its memory
            abandon(new ShmTransportActor.Dial(conn, peer, lane));
            throw new EndpointFailedException("shm: " + peer.name + " lost the CONNECT this worker wrote into its"
                    + " inbox (" + e.getMessage() + ")");
        }
        peer.doorbell.ring();
        return new ShmTransportActor.Dial(conn, peer, lane);
    }

    /** Transport actor: the peer answered; the endpoint gets the ring lane and, where it works, a cma lane. */
    @Override
    public List<LaneConnection> connected(ShmTransportActor.Dial d, int limit) {
        dialing.remove(d.conn());
        d.lane().peerLimit(limit);
        if (!cma) {
            return List.of(d.lane());
        }
        // UCX's shm shape: an AM lane (with atomics in software) and a bulk RMA lane.
        CmaLane bulk = new CmaLane(this, d.peer(), settings.maxFragment());
        cmaLanes.add(bulk);
        return List.of(d.lane(), bulk);
    }

    /** Transport actor: a late CONNECTED finds nothing, and the peer refuses the gate's records. */
    @Override
    public void abandon(ShmTransportActor.Dial d) {
        dialing.remove(d.conn());
        lanes.remove(d.lane());
        inbox.gates.revoke(d.lane().gate);
        gateSlots.release(d.lane().gate, () -> peers.kept(d.peer()));
        // The peer may have taken the CONNECT (its answer came late, or claimed too little): without
        // a BYE it would hold the connection, and its exactly-once window, until this process ends.
        d.peer().bye(d.conn());
    }

    /** Transport actor: a closed registration's quarantine is over. */
    @Override
    public void release(int slot) {
        memory.release(slot);
    }

    /** Transport actor: the polling thread fails the peer's ring lanes (cma reaches a stopped process). */
    @Override
    public void peerStalled(Inbox peer, Duration timeout) {
        losses.stalled(peer, timeout);
    }

    /** Transport actor: the polling thread fails the peer's lanes and forgets its connections. */
    @Override
    public void peerGone(Inbox peer) {
        peers.forget(peer);
        losses.gone(peer);
    }

    /** A cma lane was closed: it holds nothing of the peer's. */
    void closed(CmaLane lane) {
        cmaLanes.remove(lane);
    }

    /**
     * Puts a new connection behind a cma lane's slot, as a transport does when it rebuilds a
     * connection: the endpoint gets it as a replaced lane, in order with everything else.
     */
    CmaLane replace(CmaLane old) {
        CmaLane next = new CmaLane(this, old.peer, old.maxFragment());
        cmaLanes.add(next);
        cmaLanes.remove(old);
        old.replacedBy();
        old.boundListener().onReplaced(next);
        return next;
    }

    /**
     * Lanes that left {@link #lanes}: the polling thread reports what they gathered one last time
     * (an answer the endpoint waits for may sit in a lane's completion batch when it is forgotten).
     */
    private final java.util.concurrent.ConcurrentLinkedQueue<ShmLane> leaving =
            new java.util.concurrent.ConcurrentLinkedQueue<>();

    /** A lane was closed or given up by its endpoint, and owes no answer. */
    void closed(ShmLane lane) {
        lanes.remove(lane);
        leaving.add(lane);
        inbox.doorbell.ring();
        inbox.gates.revoke(lane.gate); // nothing more of it is applied, whatever still waits in the peer's inbox
        gateSlots.release(lane.gate, () -> peers.kept(lane.peer));
        lane.peer.bye(lane.conn);
    }

    // ------------------------------------------------------------------ polling thread

    /** Its loop threw an Error: the transport stops as when its inbox broke ({@link InboxFailStop}). */
    @Override
    public void failStop(Error cause) {
        failStop.stop(cause);
    }

    @Override
    public int doWork() {
        producerSeen = inbox.ring.producerPosition();
        int work = 0;
        if (!failStop.stopped()) {
            int read = framing.read(messages, 256);
            if (read == InboxFraming.BROKEN) {
                failStop.stop(framing.describeHead());
            } else {
                work = read;
            }
        }
        int changed = peers.changes();
        if (changed != inboxesSeen) { // bumped after the change: this look sees the map with it
            inboxesSeen = changed;
            inboxes = peers.all();
        }
        for (Inbox o : inboxes) {
            if (!o.backlog.isEmpty()) {
                work += target.drainBacklog(o);
            }
        }
        attention.serve(); // not counted as work, as before: a probe may wait a heartbeat, and must not spin
        for (ShmLane l; (l = leaving.poll()) != null;) {
            l.flushBatch();
        }
        work += losses.serveStalls();
        work += losses.serveDeaths();
        losses.sweepIfWanted();
        // A producer killed between claiming a record and committing it blocks this inbox for every
        // peer; Agrona's unblock() skips such a record. Only a record claimed before a death was seen,
        // and only once housekeeping found the read position stuck at it (a live producer commits in
        // microseconds, so one still writing is not cut short); a dead process may have left several
        // (one per thread), each skipped in turn.
        if (losses.takeProcessDied()) { // a peer worker's close is no death: its process finishes what it claimed
            halfWritten.deathSeen(inbox.ring.producerPosition());
        }
        // unblock() reads the shared head, which this pass's read put back if another process moved it.
        if (halfWritten.asked() && halfWritten.take(inbox.ring.producerPosition(), framing.position())
                && inbox.ring.unblock()) {
            LOG.warn("shm {}: skipped a message a dead peer left half-written in the inbox", context.workerName());
        }
        return work;
    }

    /** Lanes with something for the polling thread: only these are visited on a pass. */
    private final ShmAttention attention;

    /** Any thread: the lane has something for the polling thread. */
    void attend(ShmLane lane) {
        attention.attend(lane);
    }

    /** Polling thread: as {@link #attend}, straight onto its own list (no queue in between). */
    void attendHere(ShmLane lane) {
        attention.attendHere(lane);
    }

    /**
     * Transport actor, every liveness interval: mappings of segments their owners closed are dropped,
     * gates a stopped peer held are freed once it left them, the polling thread looks again at lanes to
     * gone peers, and an inbox stuck behind a record no live process will commit is unblocked: at once
     * when the record was claimed before a peer process was found gone; after inbox-unblock-after when
     * the directory shows that some process this worker never knew (one that died before it
     * connected) is gone.
     */
    @Override
    public void housekeeping() {
        memory.forgetClosedPeerSegments();
        gateSlots.releaseLeft();
        losses.sweepSoon();
        long read = inbox.ring.consumerPosition();
        if (halfWritten.tick(System.nanoTime(), read, inbox.ring.producerPosition())
                == HalfWrittenRule.Verdict.UNBLOCK_IF_SOME_PROCESS_DIED && Segments.removeStale(directory) > 0) {
            halfWritten.staleRemoved(read);
        }
        inbox.doorbell.ring(); // the polling thread may sleep: the sweep and any unblock are its work
    }

    // ------------------------------------------------------------------ close

    @Override
    public void close() {
        if (closed) {
            return;
        }
        closed = true;
        Heartbeat.stop(inbox); // the runtime stopped the polling loop before this
        if (!failStop.stopped()) { // a broken inbox's peers are told why already
            inbox.markClosed(); // peers fail their lanes to this worker and let its segment go at their next tick
        }
        inbox.closeAllSlots(); // a peer's cma transfer finds every region closed from now, not at the regions' close
        List<ShmLane> all = new ArrayList<>(lanes.all()); // closed() takes them out of the map
        for (ShmLane l : all) {
            l.forget(); // peers forget the connection now, not when they notice this process is gone
        }
        for (ShmLane l : all) {
            l.fail(new EndpointFailedException("shm: worker '" + context.workerName() + "' closed its transport"));
        }
        memory.close();
        Segments.remove(inboxFile);
    }
}
