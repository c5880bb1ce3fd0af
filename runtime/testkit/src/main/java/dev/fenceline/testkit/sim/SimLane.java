package dev.fenceline.testkit.sim;

import dev.fenceline.EndpointFailedException;
import dev.fenceline.FencelineException;
import dev.fenceline.LaneType;
import dev.fenceline.spi.LaneConnection;
import dev.fenceline.spi.LaneListener;
import dev.fenceline.spi.PostStatus;
import dev.fenceline.spi.RemoteAccessTarget;
import dev.fenceline.spi.TransportOp;
import java.util.Set;
import java.util.SplittableRandom;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;

/**
 * One simulated connection. Each operation is delivered after a delay drawn from the lane's range,
 * but never before an operation posted earlier on the same lane, and applied to the target's real
 * memory at that moment. Posting and flushing are called by the owning endpoint actor only.
 */
final class SimLane implements LaneConnection {
    private static final AtomicLong IDS = new AtomicLong();

    private final long id = IDS.incrementAndGet();
    private final int index;
    private final SimLaneSpec spec;
    private final SimFabric fabric;
    private final SimTransport peer;
    private final SplittableRandom random;
    private final int maxFragment;
    private final int queueDepth;
    private final AtomicInteger undelivered = new AtomicInteger();
    private volatile LaneListener listener;
    private volatile boolean wantReady;
    private volatile boolean dead;
    private long lastDue;

    SimLane(int index, SimLaneSpec spec, SimFabric fabric, SimTransport peer, long seed, int maxFragment,
            int queueDepth) {
        this.index = index;
        this.spec = spec;
        this.fabric = fabric;
        this.peer = peer;
        this.random = new SplittableRandom(seed);
        this.maxFragment = maxFragment;
        this.queueDepth = queueDepth;
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
    public boolean ordered() {
        return true;
    }

    @Override
    public void bind(LaneListener l) {
        this.listener = l;
    }

    private long nextDue() {
        long min = spec.minDelay().toNanos();
        long max = spec.maxDelay().toNanos();
        long delay = max > min ? min + random.nextLong(max - min + 1) : min;
        lastDue = Math.max(lastDue, System.nanoTime() + delay);
        return lastDue;
    }

    @Override
    public PostStatus post(TransportOp op) {
        if (dead) {
            throw new EndpointFailedException("sim lane " + index + " (connection " + id + ") is closed");
        }
        if (undelivered.get() >= queueDepth) {
            wantReady = true;
            if (undelivered.get() >= queueDepth) { // re-check: a delivery may have raced the flag
                return PostStatus.NO_RESOURCE;
            }
        }
        undelivered.incrementAndGet();
        fabric.schedule(nextDue(), () -> deliver(op));
        return PostStatus.IN_PROGRESS;
    }

    @Override
    public PostStatus flush(long token) {
        if (dead) {
            throw new EndpointFailedException("sim lane " + index + " (connection " + id + ") is closed");
        }
        lastDue = Math.max(lastDue, System.nanoTime());
        fabric.schedule(lastDue, () -> {
            if (!dead) {
                listener.onFlushed(token);
            }
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
    }

    private void deliver(TransportOp op) {
        int left = undelivered.decrementAndGet();
        if (dead) {
            return;
        }
        LaneListener l = listener;
        RemoteAccessTarget target = peer.target();
        if (target == null) {
            dead = true;
            l.onLaneFailed(new EndpointFailedException("sim peer worker '" + peer.workerName() + "' is closed"));
            return;
        }
        long value = 0;
        try {
            long keyId = op.key() == null ? 0 : op.key().keyId();
            switch (op.kind()) {
                case PUT -> target.put(keyId, op.remoteAddress(), op.local());
                case GET -> target.get(keyId, op.remoteAddress(), op.local());
                case ATOMIC_POST, ATOMIC_FETCH -> value = target.atomic(keyId, op.remoteAddress(), op.width(),
                        op.atomicOp(), op.operand());
                case CSWAP -> value = target.compareAndSwap(keyId, op.remoteAddress(), op.width(), op.compare(),
                        op.operand());
                case AM -> target.activeMessage(op.amId(), op.header(), op.local());
            }
        } catch (FencelineException e) {
            l.onFailed(op.token(), e);
            readyIfWaiting(left);
            return;
        }
        l.onCompleted(op.token(), value);
        readyIfWaiting(left);
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
