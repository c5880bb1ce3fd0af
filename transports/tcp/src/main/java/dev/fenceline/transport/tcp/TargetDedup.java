package dev.fenceline.transport.tcp;

import dev.fenceline.spi.support.DedupBudget;
import dev.fenceline.spi.support.DedupWindow;
import dev.fenceline.spi.support.ExactlyOnce;
import io.netty.util.concurrent.EventExecutor;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;

/**
 * The target's dedup windows, one per (authenticated peer, origin endpoint), shared by every
 * connection (rail) from that endpoint so an operation re-sent over another rail is recognised. A
 * window outlives its last connection by the linger time, long enough for a rail to reconnect and
 * re-send.
 *
 * <p>A window belongs to the identity its peer proved at wireup, not only to the origin id the
 * peer names in its frames: one peer naming another's origin id reaches a window of its own, never
 * the other's. What one peer's windows hold together is bounded ({@code limits.dedup-entries-per-peer}),
 * and so is what all of them hold ({@code limits.dedup-entries}): an operation past a bound is
 * refused, not applied, and every other peer is unaffected.
 */
final class TargetDedup {
    /** Whose window: the peer's proven identity and the origin endpoint it names. */
    record Key(String peer, long origin) {
    }

    /** One origin endpoint's window; lock it while looking up and recording. */
    static final class Origin {
        final Key key;
        final DedupWindow window;
        private int connections;

        Origin(Key key, DedupWindow window) {
            this.key = key;
            this.window = window;
        }
    }

    private final Map<Key, Origin> origins = new ConcurrentHashMap<>();
    private final Map<String, DedupBudget> peers = new ConcurrentHashMap<>();
    private final DedupBudget total;
    private final long perPeer;
    private final ExactlyOnce exactlyOnce;
    private final long lingerNanos;

    /**
     * @param perPeer the most entries one peer's windows hold together
     * @param total the most entries all windows hold together
     */
    TargetDedup(ExactlyOnce exactlyOnce, Duration linger, long perPeer, long total) {
        this.exactlyOnce = exactlyOnce;
        this.lingerNanos = linger.toNanos();
        this.perPeer = perPeer;
        this.total = new DedupBudget("limits.dedup-entries = " + total, total, null);
    }

    /**
     * A connection starts carrying operations of {@code origin} from {@code peer}.
     *
     * @return its window, or null if the peer's or the target's bound cannot hold another one
     */
    Origin retain(String peer, long origin) {
        Key key = new Key(peer, origin);
        while (true) {
            Origin o = origins.get(key);
            if (o == null) {
                DedupWindow w = newWindow(peer);
                if (w == null) {
                    return null;
                }
                Origin fresh = new Origin(key, w);
                o = origins.putIfAbsent(key, fresh);
                if (o == null) {
                    o = fresh;
                } else {
                    drop(fresh);
                }
            }
            synchronized (o) {
                if (origins.get(key) == o) { // not evicted between the lookup and the lock
                    o.connections++;
                    return o;
                }
            }
        }
    }

    /** The peer's budget is made, used and dropped under its map entry, so none is lost to a race. */
    private DedupWindow newWindow(String peer) {
        DedupWindow[] made = new DedupWindow[1];
        peers.compute(peer, (p, budget) -> {
            DedupBudget b = budget != null ? budget
                    : new DedupBudget("limits.dedup-entries-per-peer = " + perPeer + " for " + p, perPeer, total);
            made[0] = exactlyOnce.newWindow(b);
            return b.used() == 0 ? null : b;
        });
        return made[0];
    }

    /** A window no connection uses gives its storage back; a peer left with none is forgotten. */
    private void drop(Origin o) {
        o.window.release();
        peers.computeIfPresent(o.key.peer(), (p, b) -> b.used() == 0 ? null : b);
    }

    /** A connection that carried operations of {@code o} closed; evict its window after the linger. */
    void release(Origin o, EventExecutor scheduler) {
        synchronized (o) {
            if (--o.connections > 0) {
                return;
            }
        }
        try {
            scheduler.schedule(() -> evictIfUnused(o), lingerNanos, TimeUnit.NANOSECONDS);
        } catch (java.util.concurrent.RejectedExecutionException shuttingDown) {
            evictIfUnused(o);
        }
    }

    private void evictIfUnused(Origin o) {
        synchronized (o) {
            if (o.connections == 0 && origins.remove(o.key, o)) {
                drop(o);
            }
        }
    }

    /** @return how many origin windows are held (for tests and statistics) */
    int size() {
        return origins.size();
    }

    /** @return how many dedup entries all windows hold (for tests and statistics) */
    long entries() {
        return total.used();
    }
}
