package dev.fenceline.transport.shm;

import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;

/**
 * The heartbeats of this process's workers, in their control segments: one daemon thread counts
 * each up every {@link #PERIOD_MILLIS} ms. A peer's keepalive reads the count: it moves while this
 * process runs, even while a worker's polling thread is busy in a slow handler, and stops when the
 * process is stopped or paused. So a slow handler does not fail other endpoints' lanes, and a
 * stopped process does.
 */
final class Heartbeat {
    /** How often each worker's count moves. */
    static final long PERIOD_MILLIS = 50;
    private static final Set<Inbox> BEATING = ConcurrentHashMap.newKeySet();

    private Heartbeat() {
    }

    /** The one heartbeat thread, started the first time a worker's segment is counted (class initialization is the lock). */
    private static final class Beater {
        static final ScheduledExecutorService THREAD = Executors.newSingleThreadScheduledExecutor(r -> {
            Thread t = new Thread(r, "fenceline-shm-heartbeat");
            t.setDaemon(true);
            return t;
        });

        static {
            THREAD.scheduleAtFixedRate(() -> BEATING.forEach(Inbox::beat), PERIOD_MILLIS, PERIOD_MILLIS,
                    TimeUnit.MILLISECONDS);
        }

        private Beater() {
        }

        static void ensureStarted() {
            // loading the class started the thread
        }
    }

    /** @param inbox a worker's own control segment, from now on counted up */
    static void start(Inbox inbox) {
        BEATING.add(inbox);
        inbox.beat();
        Beater.ensureStarted();
    }

    /** @param inbox a worker's control segment, about to be unmapped */
    static void stop(Inbox inbox) {
        BEATING.remove(inbox);
    }
}
