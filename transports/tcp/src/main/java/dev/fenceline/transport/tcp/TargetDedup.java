package dev.fenceline.transport.tcp;

import dev.fenceline.spi.support.DedupWindow;
import dev.fenceline.spi.support.ExactlyOnce;
import io.netty.util.concurrent.EventExecutor;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;

/**
 * The target's dedup windows, one per origin endpoint, shared by every connection (rail) from that
 * endpoint so an operation re-sent over another rail is recognised. A window outlives its last
 * connection by the linger time, long enough for a rail to reconnect and re-send.
 */
final class TargetDedup {
    /** One origin endpoint's window; lock it while looking up and recording. */
    static final class Origin {
        final long id;
        final DedupWindow window;
        private int connections;

        Origin(long id, DedupWindow window) {
            this.id = id;
            this.window = window;
        }
    }

    private final Map<Long, Origin> origins = new ConcurrentHashMap<>();
    private final ExactlyOnce exactlyOnce;
    private final long lingerNanos;

    TargetDedup(ExactlyOnce exactlyOnce, Duration linger) {
        this.exactlyOnce = exactlyOnce;
        this.lingerNanos = linger.toNanos();
    }

    /** A connection starts carrying operations of {@code origin}. */
    Origin retain(long origin) {
        while (true) {
            Origin o = origins.computeIfAbsent(origin, id -> new Origin(id, exactlyOnce.newWindow()));
            synchronized (o) {
                if (origins.get(origin) == o) { // not evicted between the lookup and the lock
                    o.connections++;
                    return o;
                }
            }
        }
    }

    /** A connection that carried operations of {@code o} closed; evict its window after the linger. */
    void release(Origin o, EventExecutor scheduler) {
        synchronized (o) {
            if (--o.connections > 0) {
                return;
            }
        }
        try {
            scheduler.schedule(() -> {
                synchronized (o) {
                    if (o.connections == 0) {
                        origins.remove(o.id, o);
                    }
                }
            }, lingerNanos, TimeUnit.NANOSECONDS);
        } catch (java.util.concurrent.RejectedExecutionException shuttingDown) {
            origins.remove(o.id, o);
        }
    }

    /** @return how many origin windows are held (for tests and statistics) */
    int size() {
        return origins.size();
    }
}
