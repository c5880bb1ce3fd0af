package dev.fenceline.transport.ucx;

import dev.fenceline.ConfigurationException;
import dev.fenceline.EndpointFailedException;
import dev.fenceline.FencelineException;
import dev.fenceline.affinity.CpuAffinity;
import dev.fenceline.spi.LaneConnection;
import dev.fenceline.spi.ProgressAgent;
import dev.fenceline.spi.RegionHandle;
import dev.fenceline.spi.SharedMemory;
import dev.fenceline.spi.Transport;
import dev.fenceline.spi.TransportActors;
import dev.fenceline.spi.TransportContext;
import dev.fenceline.spi.support.Host;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import org.agrona.concurrent.BackoffIdleStrategy;
import org.agrona.concurrent.BusySpinIdleStrategy;
import org.agrona.concurrent.IdleStrategy;
import org.agrona.concurrent.SleepingIdleStrategy;
import org.agrona.concurrent.YieldingIdleStrategy;
import org.apache.pekko.actor.typed.ActorRef;

/**
 * One worker's ucx transport: a UCT worker with an iface per selected resource, opened here (so the
 * worker's address can name them) and from then on driven only by the progress agent; the worker's
 * memory as UCT sees it ({@link UcxRegions}); the control actor ({@link UcxTransportActor}).
 */
final class UcxTransport implements Transport, UcxTransportActor.Backend {
    /** UCT transports whose iface settings include UCT's shared-memory table, named with its prefix MM_. */
    private static final java.util.Set<String> SHARED_MEMORY = java.util.Set.of("posix", "sysv");

    private static final org.slf4j.Logger LOG = org.slf4j.LoggerFactory.getLogger(UcxTransport.class);

    private final TransportContext context;
    private final UcxSettings settings;
    private final UctWorker worker;
    private final List<UctIface> ifaces = new ArrayList<>();
    private final UcxRegions regions;
    private final byte[] address;
    private final UcxAgent agent;
    private volatile ActorRef<UcxTransportActor.Command> actor;
    private volatile boolean closed;

    UcxTransport(TransportContext context, UcxSettings settings) {
        // An endpoint has at most a lane per lane type (each type goes to one transport).
        int lanes = dev.fenceline.LaneType.values().length;
        long inFlight = (long) lanes * settings.queueDepth();
        int window = context.windows().windowSize();
        if (window < inFlight) { // an endpoint's operations past the window would each be refused
            throw new dev.fenceline.ConfigurationException("fenceline.exactly-once.window = " + window
                    + " is invalid with ucx's queue-depth = " + settings.queueDepth() + ": expected at least "
                    + inFlight + " (" + lanes + " lanes, one per lane type, each holding queue-depth operations),"
                    + " so every operation an endpoint's lanes can hold fits");
        }
        CpuAffinity.checkProcessMayRun(settings.progressCpus(), UcxSettings.SECTION + ".progress-cpus");
        this.context = context;
        this.settings = settings;
        List<UctResource> selected = UctSelection.select(UcxNative.resources(), settings.tls(), settings.devices(),
                UcxSettings.SECTION);
        this.worker = UctWorker.create();
        UcxRegions made = null;
        try {
            List<String> refused = new ArrayList<>();
            for (UctResource r : selected) {
                try {
                    UctIface iface = worker.open(r, settings.uct().getOrDefault(r.transport(), Map.of()));
                    if (settings.uctFlushAlways()) {
                        iface.flushThroughUct();
                    }
                    ifaces.add(iface);
                    if (r.transport().equals("tcp")) { // opened only with tcp-unchecked-writes = accept
                        String exposure = "ucx " + context.workerName() + ": UCT tcp on " + r.device() + " writes any"
                                + " address of this process that a connected peer's put names (tcp-unchecked-writes ="
                                + " accept): every process that reaches its port is trusted";
                        if (r.device().equals("lo")) {
                            LOG.info(exposure);
                        } else {
                            LOG.warn(exposure);
                        }
                    }
                } catch (UctException e) {
                    if (e.getMessage().contains("UCT refused the setting")) { // the shim's words for a bad setting
                        throw new ConfigurationException(UcxSettings.SECTION + ".uct." + r.transport() + ": "
                                + e.getMessage() + " (the names are those `ucx_info -c` lists without UCX_"
                                + r.transport().toUpperCase(java.util.Locale.ROOT) + "_"
                                + (SHARED_MEMORY.contains(r.transport()) ? "; the settings posix and sysv share"
                                        + " (FIFO_SIZE, SEG_SIZE, FIFO_ELEM_SIZE, ...) take UCT's prefix MM_, as in"
                                        + " MM_FIFO_SIZE" : "") + ")", e);
                    }
                    refused.add(r + ": " + e.getMessage());
                    LOG.warn("ucx {}: {} not opened: {}", context.workerName(), r, e.getMessage());
                }
            }
            if (ifaces.isEmpty()) {
                throw new FencelineException("ucx: no UCT resource of " + UcxSettings.SECTION + ".tls = "
                        + settings.tls() + " and devices = " + settings.devices() + " could be opened on this host"
                        + (refused.isEmpty() ? " (it has " + UcxNative.resources() + ")" : ": " + refused));
            }
            if (ifaces.size() > UcxAddress.MAX_IFACES) {
                throw new ConfigurationException(UcxSettings.SECTION + ": tls = " + settings.tls() + " and devices = "
                        + settings.devices() + " opened " + ifaces.size() + " UCT interfaces on this host, and a"
                        + " worker's address holds at most " + UcxAddress.MAX_IFACES + ": name the devices to use");
            }
            made = new UcxRegions(ifaces, settings.maxRegistrations(), this::quarantine);
            this.regions = made;
            List<UcxAddress.Iface> named = new ArrayList<>();
            for (UctIface i : ifaces) {
                named.add(new UcxAddress.Iface(i.resource().transport(), i.resource().device(), i.address()));
            }
            this.address = new UcxAddress(Host.bootId() + " " + Host.pidNamespaceId(), Host.pid(), Host.startTime(),
                    named, regions.tableAddress()).encode();
            this.agent = new UcxAgent(worker, ifaces, settings, context.workerId(), context.workerName(), address,
                    context.target(), context.windows(), new Reports());
        } catch (RuntimeException e) {
            try {
                if (made != null) {
                    made.close(); // stops the key table's heartbeat before the worker frees the table's memory
                }
            } catch (RuntimeException closing) {
                e.addSuppressed(closing); // the start's failure is the one to report
            } finally {
                worker.close();
            }
            throw e;
        }
    }

    /** The agent's reports go to the actor, which owns the connects' lifecycles. */
    private final class Reports implements UcxWiringReports {
        @Override
        public void dialed(long dial, List<LaneConnection> lanes) {
            tell(new UcxTransportActor.Dialed(dial, lanes));
        }

        @Override
        public void dialFailed(long dial, FencelineException why) {
            tell(new UcxTransportActor.DialFailed(dial, why));
        }

        @Override
        public void peerSeen(UUID peer, long pid, long start) {
            tell(new UcxTransportActor.PeerSeen(peer, pid, start));
        }

        @Override
        public void stopped() {
            regions.stopHeartbeat(); // peers on this host fail their lanes at their next look, not wait
        }

        @Override
        public void peerForgotten(UUID peer) {
            tell(new UcxTransportActor.PeerForgotten(peer));
        }
    }

    private void tell(UcxTransportActor.Command c) {
        ActorRef<UcxTransportActor.Command> a = actor;
        if (a != null) {
            a.tell(c);
        }
    }

    @Override
    public String name() {
        return UcxTransportProvider.NAME;
    }

    @Override
    public String workerName() {
        return context.workerName();
    }

    /** Host identity, process, every iface's UCT address, and where the key table is. */
    @Override
    public byte[] localAddress() {
        return address.clone();
    }

    @Override
    public void start(TransportActors actors) {
        actor = actors.spawn(UcxTransportActor.create(this, settings.livenessInterval(), settings.connectTimeout(),
                settings.quarantine()), "control");
    }

    @Override
    public List<ProgressAgent> progressAgents() {
        return List.of(new ProgressAgent(agent, idle(settings), agent.wakeup()));
    }

    private static IdleStrategy idle(UcxSettings s) {
        return switch (s.idleStrategy()) {
            case "busy-spin" -> new BusySpinIdleStrategy();
            case "yield" -> new YieldingIdleStrategy();
            case "sleep" -> new SleepingIdleStrategy(s.idleParkMax().toNanos());
            default -> new BackoffIdleStrategy(100, 10, s.idleParkMin().toNanos(), s.idleParkMax().toNanos());
        };
    }

    /** Connecting is the transport actor's: the agent carries out the wireup, a timer bounds it. */
    @Override
    public CompletionStage<List<LaneConnection>> connect(UUID peerId, byte[] peerAddress) {
        ActorRef<UcxTransportActor.Command> a = actor;
        if (a == null) {
            return CompletableFuture.failedFuture(new EndpointFailedException("ucx: worker '" + context.workerName()
                    + "' never started this transport (the worker actor starts it)"));
        }
        if (closed) {
            return CompletableFuture.failedFuture(new EndpointFailedException("ucx: the transport is closed"));
        }
        EndpointFailedException stopped = agent.stoppedBecause();
        if (stopped != null) {
            return CompletableFuture.failedFuture(stopped);
        }
        CompletableFuture<List<LaneConnection>> result = new CompletableFuture<>();
        a.tell(new UcxTransportActor.Connect(peerId, peerAddress.clone(), result));
        return result;
    }

    // ------------------------------------------------------------------ the actor's backend

    @Override
    public void dial(long dial, UUID peer, byte[] peerAddress) {
        agent.submitControl(new UcxCommand.Dial(dial, peer, UcxAddress.decode(peerAddress)));
    }

    @Override
    public void abandon(long dial) {
        agent.submitControl(new UcxCommand.Abandon(dial));
    }

    @Override
    public void tick() {
        agent.submitControl(UcxCommand.Tick.TICK);
    }

    @Override
    public void peerGone(UUID peer) {
        agent.submitControl(new UcxCommand.PeerGone(peer));
    }

    @Override
    public boolean alive(long pid, long start) {
        return Host.alive(pid, start);
    }

    // ------------------------------------------------------------------ memory

    @Override
    public SharedMemory allocateShared(long bytes) {
        return regions.allocate(bytes);
    }

    @Override
    public RegionHandle registerRegion(ByteBuffer memory) {
        return regions.register(memory);
    }

    /** A closed region's memory and slot are kept for the quarantine (freed now if the actor is gone). */
    private void quarantine(UcxRegions.Closed region) {
        ActorRef<UcxTransportActor.Command> a = actor;
        if (a != null && !closed) {
            a.tell(new UcxTransportActor.Quarantine(region));
        }
    }

    /** The runtime stopped the progress agent before this: nothing else touches UCT now. */
    @Override
    public void close() {
        if (closed) {
            return;
        }
        closed = true;
        regions.close();
        worker.close();
    }
}
