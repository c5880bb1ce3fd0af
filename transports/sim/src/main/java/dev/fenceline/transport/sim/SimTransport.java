package dev.fenceline.transport.sim;

import dev.fenceline.EndpointFailedException;
import dev.fenceline.spi.support.DedupWindow;
import dev.fenceline.spi.support.ExactlyOnce;
import dev.fenceline.spi.support.ExactlyOnceWindows;
import dev.fenceline.spi.TransportOp;
import dev.fenceline.spi.LaneConnection;
import dev.fenceline.spi.RemoteAccessTarget;
import dev.fenceline.spi.RequestTrace;
import dev.fenceline.spi.Transport;
import dev.fenceline.spi.TransportActors;
import dev.fenceline.spi.TransportContext;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;
import org.apache.pekko.actor.typed.ActorRef;

/** One worker's sim transport: its fabric thread and the lanes its endpoints open. */
final class SimTransport implements Transport, SimTransportActor.Backend {
    /** Every open sim transport in this JVM, so workers of different runtimes can connect. */
    private static final Map<UUID, SimTransport> REGISTRY = new ConcurrentHashMap<>();

    private final TransportContext context;
    private final SimSettings settings;
    private final SimFabric fabric;
    private final AtomicInteger connections = new AtomicInteger();
    /** Target side of exactly-once: the worker's windows, shared with its other transports. */
    private final ExactlyOnceWindows windows;
    private final ExactlyOnce exactlyOnce;
    private volatile RemoteAccessTarget target;
    /** The control actor; set by {@link #start}. */
    private volatile ActorRef<SimTransportActor.Command> actor;
    /** Fault injection: apply re-sent operations again (breaks exactly-once on purpose). */
    private volatile boolean dedupBroken;
    /** Workers this one cannot reach (a partition), by id. */
    private final java.util.Set<UUID> partitioned = ConcurrentHashMap.newKeySet();

    /** @return this transport's worker */
    UUID workerId() {
        return context.workerId();
    }

    boolean partitionedFrom(SimTransport other) {
        return !partitioned.isEmpty() && partitioned.contains(other.context.workerId());
    }

    static void partition(UUID a, UUID b, boolean cut) {
        SimTransport ta = REGISTRY.get(a);
        SimTransport tb = REGISTRY.get(b);
        if (ta == null || tb == null) {
            throw new IllegalArgumentException("no open sim worker " + (ta == null ? a : b));
        }
        if (cut) {
            ta.partitioned.add(b);
            tb.partitioned.add(a);
        } else {
            ta.partitioned.remove(b);
            tb.partitioned.remove(a);
            ta.healed(b); // connects waiting on either side go through now
            tb.healed(a);
        }
    }

    SimTransport(TransportContext context, SimSettings settings) {
        this.context = context;
        this.settings = settings;
        this.windows = context.windows();
        this.exactlyOnce = windows.exactlyOnce();
        this.target = context.target();
        this.fabric = new SimFabric("fenceline-sim-" + context.workerName(),
                settings.deterministic() ? SimClock.require("fenceline.transport.sim.deterministic = on") : null);
        REGISTRY.put(context.workerId(), this);
    }

    private void healed(UUID other) {
        ActorRef<SimTransportActor.Command> a = actor;
        if (a != null) {
            a.tell(new SimTransportActor.Healed(other));
        }
    }

    RemoteAccessTarget target() {
        return target;
    }

    @Override
    public String workerName() {
        return context.workerName();
    }

    SimFabric fabric() {
        return fabric;
    }

    SimSettings settings() {
        return settings;
    }

    /** A new connection from this worker to {@code peer}, for lane {@code index}. */
    SimLane newLane(int index, SimLaneSpec spec, SimTransport peer) {
        int connection = connections.incrementAndGet();
        long seed = settings.seed() * 1_000_003L + connection * 131L + index;
        return new SimLane(index, spec, this, fabric, peer, seed, settings.maxFragment(), settings.queueDepth());
    }

    /**
     * Applies an operation at most once per (origin endpoint, sequence): a re-sent operation whose
     * first copy was applied gets the first copy's result. The delivering lane holds its origin's
     * window while it lives ({@link SimWindowHold}). An active message's handler runs without the
     * window's lock: a copy arriving over another of the worker's transports meanwhile is refused as
     * of unknown outcome (tcp's target waits for the handler instead).
     */
    long applyOnce(SimWindowHold hold, UUID originWorker, TransportOp op, RemoteAccessTarget t) {
        if (dedupBroken) {
            return exactlyOnce.apply(null, op.originId(), op.sequence(), op.lowWater(), () -> apply(op, t));
        }
        return hold.with(originWorker, op.originId(), held -> {
            DedupWindow w = held.window();
            if (op.sequence() < 0) {
                exactlyOnce.checkNotRefused(w, op.originId());
                return exactlyOnce.apply(null, op.originId(), op.sequence(), op.lowWater(), () -> apply(op, t));
            }
            if (op.kind() == TransportOp.Kind.AM) { // a user's handler: the window's lock is not held while it runs
                return exactlyOnce.applyOutsideLock(w, op.originId(), op.sequence(), op.lowWater(), () -> apply(op, t));
            }
            synchronized (w) { // the worker's other transports apply through it too
                return exactlyOnce.apply(w, op.originId(), op.sequence(), op.lowWater(), () -> apply(op, t));
            }
        });
    }

    /** @return the worker's exactly-once windows */
    ExactlyOnceWindows windows() {
        return windows;
    }

    /** @return the open sim transport of worker {@code id}, or null (tests) */
    static SimTransport of(UUID id) {
        return REGISTRY.get(id);
    }

    static long apply(TransportOp op, RemoteAccessTarget t) {
        long v = applyUntraced(op, t);
        RequestTrace trace = op.trace();
        if (trace != null) {
            trace.visible(op.sequence());
        }
        return v;
    }

    /**
     * A get, read into {@code into} rather than the caller's buffer (the lane copies it over if it
     * still lives). Reads are never deduplicated: a re-sent one reads again.
     */
    static long read(TransportOp op, RemoteAccessTarget t, ByteBuffer into) {
        t.get(op.key() == null ? 0 : op.key().keyId(), op.remoteAddress(), into);
        RequestTrace trace = op.trace();
        if (trace != null) {
            trace.visible(op.sequence());
        }
        return 0;
    }

    private static long applyUntraced(TransportOp op, RemoteAccessTarget t) {
        long keyId = op.key() == null ? 0 : op.key().keyId();
        return switch (op.kind()) {
            case PUT -> {
                t.put(keyId, op.remoteAddress(), op.local());
                yield 0;
            }
            case GET -> {
                t.get(keyId, op.remoteAddress(), op.local());
                yield 0;
            }
            case ATOMIC_POST, ATOMIC_FETCH -> t.atomic(keyId, op.remoteAddress(), op.width(), op.atomicOp(),
                    op.operand());
            case CSWAP -> t.compareAndSwap(keyId, op.remoteAddress(), op.width(), op.compare(), op.operand());
            case AM -> {
                // Views of this call's own: the handler may move them, and a copy may apply again.
                t.activeMessage(op.amId(), op.header().asReadOnlyBuffer(), op.local().asReadOnlyBuffer());
                yield 0;
            }
        };
    }

    static void breakDeduplication(UUID workerId) {
        SimTransport t = REGISTRY.get(workerId);
        if (t == null) {
            throw new IllegalArgumentException("no open sim worker " + workerId);
        }
        t.dedupBroken = true;
    }

    @Override
    public String name() {
        return SimTransportProvider.NAME;
    }

    @Override
    public byte[] localAddress() {
        UUID id = context.workerId();
        return ByteBuffer.allocate(16).putLong(id.getMostSignificantBits()).putLong(id.getLeastSignificantBits())
                .array();
    }

    @Override
    public void start(TransportActors actors) {
        actor = actors.spawn(SimTransportActor.create(this, settings.connectTimeout()), "control");
    }

    /** Answered by the transport actor, which waits out a partition. */
    @Override
    public CompletionStage<List<LaneConnection>> connect(UUID peerId, byte[] peerAddress) {
        ActorRef<SimTransportActor.Command> a = actor;
        if (a == null) {
            return CompletableFuture.failedFuture(new EndpointFailedException("sim: worker '" + context.workerName()
                    + "' never started this transport (the worker actor starts it)"));
        }
        if (peerAddress == null || peerAddress.length != 16) {
            return CompletableFuture.failedFuture(new EndpointFailedException("sim: the address of " + peerId
                    + " is " + (peerAddress == null ? "missing" : peerAddress.length + " bytes") + ", not 16"));
        }
        CompletableFuture<List<LaneConnection>> result = new CompletableFuture<>();
        a.tell(new SimTransportActor.Connect(peerId, result));
        return result;
    }

    @Override
    public boolean exists(UUID peer) {
        return REGISTRY.containsKey(peer);
    }

    @Override
    public boolean partitioned(UUID peer) {
        return partitioned.contains(peer);
    }

    @Override
    public List<LaneConnection> lanes(UUID peerId) {
        SimTransport peer = REGISTRY.get(peerId);
        if (peer == null) {
            throw new EndpointFailedException("sim: no open worker " + peerId + " in this JVM");
        }
        List<LaneConnection> lanes = new ArrayList<>();
        for (int i = 0; i < settings.lanes().size(); i++) {
            lanes.add(newLane(i, settings.lanes().get(i), peer));
        }
        return List.copyOf(lanes);
    }

    /**
     * Closes the worker's side. The lanes other workers hold to it fail at once, as a closed socket's
     * peer learns (otherwise an idle one would stay live, its flushes and probes answered on behalf
     * of a worker that is gone).
     */
    @Override
    public void close() {
        REGISTRY.remove(context.workerId(), this);
        target = null;
        fabric.close();
        for (SimLane l : SimLanes.to(this)) {
            l.fail(new EndpointFailedException("sim peer worker '" + workerName() + "' is closed"));
        }
    }
}
