package dev.fenceline.transport.sim;

import dev.fenceline.AtomicOp;
import dev.fenceline.EndpointFailedException;
import dev.fenceline.FencelineException;
import dev.fenceline.LaneType;
import dev.fenceline.RemoteKey;
import dev.fenceline.spi.support.ConnectionIds;
import dev.fenceline.spi.DirectAccess;
import dev.fenceline.spi.LaneConnection;
import dev.fenceline.spi.LaneListener;
import dev.fenceline.spi.PostStatus;
import dev.fenceline.spi.RemoteAccessTarget;
import dev.fenceline.spi.TransportOp;
import dev.fenceline.transport.sim.SimLaneLedger.Held;
import java.nio.ByteBuffer;
import java.util.Set;
import java.util.concurrent.atomic.AtomicIntegerFieldUpdater;

/**
 * One simulated connection. Each operation is delivered after a delay drawn from the lane's range,
 * but never before an operation posted earlier on the same lane, and applied to the target's real
 * memory at that moment. Posting and flushing are called by the owning endpoint actor only.
 */
final class SimLane implements LaneConnection, DirectAccess {

    private final long id = ConnectionIds.next();
    private final int index;
    private final SimLaneSpec spec;
    private final SimTransport origin;
    private final SimFabric fabric;
    private final SimTransport peer;
    private final SimDelays delays;
    private final int maxFragment;
    private final int queueDepth;
    private static final AtomicIntegerFieldUpdater<SimLane> UNDELIVERED =
            AtomicIntegerFieldUpdater.newUpdater(SimLane.class, "undelivered");
    /** Operations on their way to the target, through {@link #UNDELIVERED} (a field: no atomic object per lane). */
    private volatile int undelivered;
    /** Its operations' record. Guarded by this. */
    private final SimLaneLedger ledger = new SimLaneLedger();
    private volatile LaneListener listener;
    private volatile boolean wantReady;
    private volatile boolean dead;
    /** A black hole: accepts everything, delivers and acknowledges nothing, reports nothing. */
    private volatile boolean silent;
    /** Keepalive probes vanish; data still flows. */
    private volatile boolean keepalivesDropped;
    private long lastDue; // actor thread
    private long lastAckDue; // fabric thread

    SimLane(int index, SimLaneSpec spec, SimTransport origin, SimFabric fabric, SimTransport peer, long seed,
            int maxFragment, int queueDepth) {
        this.index = index;
        this.spec = spec;
        this.origin = origin;
        this.delays = new SimDelays(seed, spec.minDelay().toNanos(), spec.maxDelay().toNanos());
        this.fabric = fabric;
        this.peer = peer;
        this.maxFragment = maxFragment;
        this.queueDepth = queueDepth;
        SimLanes.register(this); // last: another thread finds it whole (SimLanes.to reads its peer)
    }

    @Override
    public long id() {
        return id;
    }

    @Override
    public String transport() {
        return SimTransportProvider.NAME;
    }

    @Override
    public Set<LaneType> types() {
        return spec.types();
    }

    @Override
    public int maxFragment() {
        return maxFragment;
    }


    @Override
    public boolean deduplicates() {
        return spec.deduplicates();
    }

    /** A deduplicating peer applies through its worker's windows, which all its transports share. */
    @Override
    public Object exactlyOnceScope() {
        return spec.deduplicates() ? new dev.fenceline.spi.support.ExactlyOnceScope(peer.workerId(),
                dev.fenceline.spi.support.ExactlyOnceWindows.MEMBER) : null;
    }

    /** A dead sim lane delivers nothing more: each copy's fate is exact ({@link SimLaneLedger#revoke}). */
    @Override
    public dev.fenceline.spi.Revocation revoke() {
        synchronized (this) { // a delivery or an answer in progress finishes first, and none starts after
            dead = true;
            return ledger.revoke(spec.revocable());
        }
    }

    /** The sim applies every operation in this JVM and reports it (see {@code SimTransport.apply}). */
    @Override
    public boolean reportsVisibility() {
        return true;
    }

    /**
     * Lane events reported before the endpoint bound this connection (fault injection may fail or
     * replace a connection the endpoint has not taken yet): they reach the listener when it is bound,
     * in order. Guarded by itself.
     */
    private final java.util.ArrayList<java.util.function.Consumer<LaneListener>> beforeBind = new java.util.ArrayList<>();

    @Override
    public void bind(LaneListener l) {
        java.util.List<java.util.function.Consumer<LaneListener>> early;
        synchronized (beforeBind) {
            this.listener = l;
            early = java.util.List.copyOf(beforeBind);
            beforeBind.clear();
        }
        early.forEach(e -> e.accept(l));
    }

    /** Reports a lane event now, or at bind if the endpoint has not bound this connection yet. */
    void report(java.util.function.Consumer<LaneListener> event) {
        LaneListener l;
        synchronized (beforeBind) {
            l = listener;
            if (l == null) {
                beforeBind.add(event);
                return;
            }
        }
        event.accept(l);
    }

    int index() {
        return index;
    }

    SimLaneSpec spec() {
        return spec;
    }

    SimTransport origin() {
        return origin;
    }

    SimTransport peer() {
        return peer;
    }

    boolean isDead() {
        return dead;
    }

    /** @return operations on their way to the target */
    int undelivered() {
        return undelivered;
    }

    void setDelay(long minNanos, long maxNanos) {
        delays.set(minNanos, maxNanos);
    }

    /** Kills the lane on the fabric thread, in order with its deliveries, and reports it. */
    void fail(Throwable cause) {
        fabric.schedule(fabric.now(), () -> {
            if (!dead) {
                dead = true;
                report(l -> l.onLaneFailed(cause));
            }
        });
    }

    /**
     * @param event reported on the fabric, after everything scheduled before it (failure reports
     *     among them), or at bind if the endpoint has not bound this connection yet
     */
    void reportOnFabric(java.util.function.Consumer<LaneListener> event) {
        fabric.schedule(fabric.now(), () -> report(event));
    }

    /** @return whether the sim still knows this connection as open (the endpoint has not closed it) */
    boolean open() {
        return SimLanes.find(id) == this;
    }

    /** Turns the lane into a black hole: only keepalive can tell. */
    void silence() {
        silent = true;
    }

    void dropKeepalives() {
        keepalivesDropped = true;
    }

    /** Delivery and acknowledgement both stop while the two workers are partitioned. */
    boolean cut() {
        return silent || origin.partitionedFrom(peer) || peer.partitionedFrom(origin);
    }

    /**
     * Something of this lane (a delivery, an answer, a flush) was lost to a partition. A reliable
     * connection never loses a message in its middle and goes on (it retransmits, or it breaks): this
     * one says nothing from now on, even once the partition heals, so that keepalive gives it up and
     * the endpoint restarts what it did not finish, instead of a later flush or probe being answered
     * over a hole. Caller: where {@link #cut()} dropped something on a lane not dead.
     */
    private void lostToPartition() {
        silent = true;
    }

    @Override
    public PostStatus keepalive(long token) {
        if (keepalivesDropped) {
            return PostStatus.IN_PROGRESS; // lost on the way
        }
        return flush(token);
    }

    /** Kills the lane without a failure report, then hands {@code next} to the listener. */
    void replaceWith(SimLane next) {
        fabric.schedule(fabric.now(), () -> {
            dead = true;
            report(l -> l.onReplaced(next));
        });
    }

    private long nextDue() {
        lastDue = Math.max(lastDue, fabric.now() + delays.draw(false));
        return lastDue;
    }

    /** Acknowledgements travel back in order too; one still on its way when the lane dies is lost. */
    private void acknowledge(Runnable ack) {
        acknowledge(false, ack);
    }

    /** @param owed whether a revoke promised this answer: then it comes even though the lane is dead */
    private void acknowledge(boolean owed, Runnable ack) {
        lastAckDue = Math.max(lastAckDue, fabric.now() + delays.draw(true));
        fabric.schedule(lastAckDue, () -> {
            synchronized (this) { // against revoke: an answer is handed over before the lane dies, or never
                if (owed || (!dead && !cut())) {
                    ack.run();
                } else if (!dead) {
                    lostToPartition();
                }
            }
        });
    }

    @Override
    public PostStatus post(TransportOp op) {
        SimPosts.checkSize(op, maxFragment);
        if (dead) {
            // Like a write into a dead socket: accepted and lost. The failure (or replacement) report
            // is already on its way to the endpoint, which restarts what this lane did not finish.
            synchronized (this) {
                ledger.posted(op.token()); // never applied: revoked when the endpoint asks
            }
            return PostStatus.IN_PROGRESS;
        }
        if (undelivered >= queueDepth) {
            wantReady = true;
            if (undelivered >= queueDepth) { // re-check: a delivery may have raced the flag
                return PostStatus.NO_RESOURCE;
            }
        }
        UNDELIVERED.incrementAndGet(this);
        synchronized (this) {
            ledger.posted(op.token());
        }
        TransportOp sent = SimPosts.sent(op);
        fabric.schedule(nextDue(), () -> deliver(sent));
        return PostStatus.IN_PROGRESS;
    }

    @Override
    public PostStatus flush(long token) {
        if (dead) {
            return PostStatus.IN_PROGRESS; // lost with the lane, re-issued after the endpoint's replay
        }
        lastDue = Math.max(lastDue, fabric.now());
        Runnable answer = () -> {
            if (!dead && !cut()) {
                acknowledge(() -> listener.onFlushed(token));
            } else if (!dead) {
                lostToPartition();
            }
        };
        fabric.schedule(lastDue, () -> {
            synchronized (this) {
                if (ledger.stalled()) {
                    ledger.hold(new Held(null, answer)); // answered when the target takes what came before
                    return;
                }
            }
            answer.run();
        });
        return PostStatus.IN_PROGRESS;
    }

    /** Delivery within a lane is in post order already, so a weak fence has nothing to add. */
    @Override
    public void fence() {
    }

    @Override
    public void close() {
        dead = true;
        SimLanes.forget(this);
        synchronized (this) {
            if (window != null) {
                window.close();
            }
        }
    }

    /** The target's hold on this lane's origin window, made at the first deduplicated delivery. */
    private SimWindowHold window;

    private synchronized SimWindowHold window() {
        if (window == null) {
            window = new SimWindowHold(peer.windows(), peer.workerName());
            if (dead) {
                window.close(); // closed before its first delivery: a late one holds it only meanwhile
            }
        }
        return window;
    }

    private void deliver(TransportOp op) {
        synchronized (this) {
            if (ledger.stalled() && (!dead || !spec.revocable())) {
                ledger.hold(new Held(op, null)); // in the stopped target's inbox, still undelivered
                return;
            }
        }
        apply(op, false);
    }

    /**
     * Applies one delivery at the target and sends its answer back.
     *
     * @param late whether a stalled target takes it only now: then it is applied even if the origin
     *     gave the lane up meanwhile (it was in the target's inbox), and its answer goes nowhere
     */
    private void apply(TransportOp op, boolean late) {
        int left = UNDELIVERED.decrementAndGet(this);
        LaneListener l = listener;
        RemoteAccessTarget target;
        synchronized (this) { // against revoke: a copy starts before the lane dies, or never
            if ((dead && !late) || cut()) {
                if (!dead) {
                    lostToPartition();
                }
                return;
            }
            if (dead && op.kind() == TransportOp.Kind.GET) {
                // A stalled target that reads for a lane its origin gave up sends the data to a lane
                // that is gone (a closed socket, a withdrawn ring): the read has no effect anywhere,
                // so it must not land in the origin's buffer here either.
                return;
            }
            target = peer.target();
            if (target == null) {
                if (!dead) {
                    dead = true;
                    l.onLaneFailed(new EndpointFailedException("sim peer worker '" + peer.workerName()
                            + "' is closed"));
                }
                return;
            }
            ledger.applying(op);
        }
        // Applied outside the lock, so that a revoke (on the endpoint actor) never waits for a slow
        // target or handler: a revoke meanwhile calls it STOPPED. A get reads into a buffer of its
        // own, copied into the caller's only if the lane still lives then.
        long value;
        FencelineException error = null;
        ByteBuffer read = op.kind() == TransportOp.Kind.GET ? ByteBuffer.allocate(op.local().remaining()) : null;
        try {
            value = read != null ? SimTransport.read(op, target, read)
                    : spec.deduplicates() ? peer.applyOnce(window(), origin.workerId(), op, target) : SimTransport.apply(op, target);
        } catch (FencelineException e) {
            value = 0;
            error = e;
        }
        boolean owed;
        synchronized (this) {
            owed = ledger.doneApplying();
            if (read != null && error == null) {
                if (dead) {
                    return; // the endpoint took the lane back, and with it the buffer
                }
                op.local().put(op.local().position(), read, 0, read.remaining());
            }
            ledger.applied(op.token());
        }
        long v = value;
        FencelineException e = error;
        long token = op.token();
        acknowledge(owed, () -> {
            ledger.answered(token);
            if (e == null) {
                l.onCompleted(token, v);
            } else {
                l.onFailed(token, e);
            }
        });
        readyIfWaiting(left);
    }

    // ------------------------------------------------------------------ a stalled target

    /**
     * The target stops taking this lane's deliveries (a paused process, a full inbox): they wait, in
     * order, and so do flushes and keepalive probes, until {@code heldFor} has passed; then the target
     * takes them all, whether or not the origin gave the lane up meanwhile, unless the origin revoked
     * them (a revocable lane's {@link #revoke()} does).
     *
     * @param heldFor how long the target stays stalled (the fabric's time)
     */
    void stall(java.time.Duration heldFor) {
        fabric.schedule(fabric.now(), () -> {
            synchronized (this) {
                if (!dead) {
                    ledger.stall();
                }
            }
        });
        fabric.schedule(fabric.now() + heldFor.toNanos(), this::resume);
    }

    /**
     * The target takes, in order, everything that waited. Under the lane's lock as one step: a
     * {@link #revoke()} comes wholly before it (and withdraws what a revocable lane holds) or wholly
     * after it (and finds each copy applied); never between taking a copy and applying it, where it
     * would call applied copies withdrawn.
     */
    private void resume() {
        synchronized (this) {
            for (Held h : ledger.resume()) {
                if (h.op() != null) {
                    apply(h.op(), true);
                } else {
                    h.flushAnswer().run();
                }
            }
        }
    }

    // ------------------------------------------------------------------ fast path by grant

    @Override
    public boolean putNow(RemoteKey key, long address, ByteBuffer src) {
        return SimDirectAccess.putNow(this, key, address, src);
    }

    @Override
    public boolean getNow(RemoteKey key, long address, ByteBuffer dst) {
        return SimDirectAccess.getNow(this, key, address, dst);
    }

    @Override
    public boolean atomicPostNow(RemoteKey key, long address, AtomicOp op, int width, long operand) {
        return SimDirectAccess.atomicPostNow(this, key, address, op, width, operand);
    }

    @Override
    public Long atomicFetchNow(RemoteKey key, long address, AtomicOp op, int width, long operand, long compare) {
        return SimDirectAccess.atomicFetchNow(this, key, address, op, width, operand, compare);
    }

    private void readyIfWaiting(int left) {
        if (wantReady && left < queueDepth) {
            wantReady = false;
            listener.onReady();
        }
    }

    @Override
    public String toString() {
        return "SimLane[" + index + ", id " + id + ", " + spec.types() + "]";
    }
}
