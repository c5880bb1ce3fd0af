package dev.fenceline.spi.support;

import java.util.Set;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;

/**
 * The heartbeats of this process's workers, each a count in shared memory its peers on this host
 * map (shm's control segment, ucx's key table): one daemon thread counts each up every
 * {@link #PERIOD_MILLIS} ms. A peer's keepalive reads the count: it moves while this process runs,
 * even while a worker's progress thread is busy in a slow handler, and stops when the process is
 * stopped or paused. So a slow handler does not fail other endpoints' lanes, and a stopped process
 * does.
 */
public final class Heartbeat {
    /** How often each count moves. */
    public static final long PERIOD_MILLIS = 50;
    /** Guarded by itself: a count is never beaten after {@link #stop} returned (its memory may go then). */
    private static final Set<Beating> BEATING = new java.util.HashSet<>();

    /** A count in shared memory. */
    public interface Beating {
        /** Counts one up (the heartbeat thread only). */
        void beat();
    }

    private Heartbeat() {
    }

    /** The one heartbeat thread, started the first time a count is started (class initialization is the lock). */
    private static final class Beater {
        static final ScheduledExecutorService THREAD = Executors.newSingleThreadScheduledExecutor(r -> {
            Thread t = new Thread(r, "fenceline-heartbeat");
            t.setDaemon(true);
            return t;
        });

        static {
            THREAD.scheduleAtFixedRate(Heartbeat::beatAll, PERIOD_MILLIS, PERIOD_MILLIS, TimeUnit.MILLISECONDS);
        }

        private Beater() {
        }

        static void ensureStarted() {
            // loading the class started the thread
        }
    }

    /**
     * One count that throws (its memory faulted: a file shrunk under its mapping) is counted no more
     * and said once: a scheduled run that threw would end the heartbeat of every worker of the process.
     */
    private static void beatAll() {
        synchronized (BEATING) {
            for (java.util.Iterator<Beating> it = BEATING.iterator(); it.hasNext();) {
                Beating b = it.next();
                try {
                    b.beat();
                } catch (RuntimeException | Error e) {
                    it.remove();
                    org.slf4j.LoggerFactory.getLogger(Heartbeat.class).error("heartbeat {} failed and stops: {}", b,
                            e.toString());
                }
            }
        }
    }

    /** @param count a worker's own count, from now on counted up */
    public static void start(Beating count) {
        synchronized (BEATING) {
            BEATING.add(count);
            count.beat();
        }
        Beater.ensureStarted();
    }

    /** @param count a worker's count, about to be unmapped: not counted once this returns */
    public static void stop(Beating count) {
        synchronized (BEATING) {
            BEATING.remove(count);
        }
    }
}
