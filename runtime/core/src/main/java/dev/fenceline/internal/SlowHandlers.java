package dev.fenceline.internal;

import dev.fenceline.jfr.SlowHandlerEvent;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLongArray;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Notices active-message handlers that run longer than a bound. While one runs past it, a watchdog
 * logs it once per handler id, with the stack it is stuck in; when it returns, the call is a JFR
 * event. A handler runs on a transport's receiving thread, so while it runs that thread serves no
 * one else. Recording a call costs two volatile writes to a slot of the calling thread's own; no
 * allocation.
 */
final class SlowHandlers {
    private static final Logger LOG = LoggerFactory.getLogger(SlowHandlers.class);
    /**
     * How often the watchdog looks at running handlers: a handler over its bound (100 ms by default)
     * is reported within this much more; each look is a wake-up of an otherwise idle process.
     */
    private static final long WATCH_NANOS = TimeUnit.MILLISECONDS.toNanos(50);
    /** Every worker's handlers, watched by one daemon thread for the whole process. */
    private static final Set<SlowHandlers> WATCHED = ConcurrentHashMap.newKeySet();
    private static ScheduledExecutorService watchdog;

    /** One thread's handler call in progress: 0 when none. */
    private static final class Running {
        final Thread thread = Thread.currentThread();
        volatile long started;
        volatile int id;
        /** The call the watchdog logged last, so that it logs a call once. */
        long reported;
    }

    private final String worker;
    private final AtomicLongArray logged = new AtomicLongArray((RegistrationTable.MAX_AM_ID + 64) / 64);
    private final ThreadLocal<Running> mine;
    private final CopyOnWriteArrayList<Running> running = new CopyOnWriteArrayList<>();
    private volatile long boundNanos;

    SlowHandlers(String worker) {
        this.worker = worker;
        this.mine = ThreadLocal.withInitial(() -> {
            Running r = new Running();
            running.add(r); // once per thread that ever runs this worker's handlers
            return r;
        });
    }

    /** @param nanos the bound, 0 for none */
    void bound(long nanos) {
        if (nanos < 0) {
            throw new IllegalArgumentException("handler time bound " + nanos + " ns is negative");
        }
        boundNanos = nanos;
        if (nanos > 0) {
            watch(this);
        } else {
            WATCHED.remove(this);
        }
    }

    private static synchronized void watch(SlowHandlers s) {
        WATCHED.add(s);
        if (watchdog == null) {
            watchdog = Executors.newSingleThreadScheduledExecutor(r -> {
                Thread t = new Thread(r, "fenceline-handler-watchdog");
                t.setDaemon(true);
                return t;
            });
            watchdog.scheduleWithFixedDelay(SlowHandlers::watchAll, WATCH_NANOS, WATCH_NANOS, TimeUnit.NANOSECONDS);
        }
    }

    /** @return how many workers' handlers are watched (tests) */
    static int watched() {
        return WATCHED.size();
    }

    /** The worker closed: its handlers are watched no more. */
    void close() {
        WATCHED.remove(this);
    }

    private static void watchAll() {
        long now = System.nanoTime();
        for (SlowHandlers s : WATCHED) {
            try {
                s.watchOnce(now);
            } catch (RuntimeException e) {
                LOG.debug("handler watchdog: {}", e.toString());
            }
        }
    }

    private void watchOnce(long now) {
        long bound = boundNanos;
        for (Running r : running) {
            long started = r.started;
            if (started == 0 || started == r.reported || now - started <= bound) {
                continue;
            }
            r.reported = started;
            int id = r.id;
            if (r.started == started && firstTime(id)) {
                Throwable where = new Throwable("active-message handler " + id + " still running, here");
                where.setStackTrace(r.thread.getStackTrace());
                LOG.warn("active-message handler {} at worker '{}' has run {} ms, over its bound of {} ms, on thread"
                        + " {}, which serves nothing else meanwhile (logged once per handler id)", id, worker,
                        (now - started) / 1_000_000, bound / 1_000_000, r.thread.getName(), where);
            }
        }
    }

    /**
     * @param id the handler's active-message id
     * @return when the call starts, for {@link #finished}; 0 when there is no bound
     */
    long start(int id) {
        if (boundNanos == 0) {
            return 0;
        }
        Running r = mine.get();
        long now = System.nanoTime();
        long started = now == 0 ? 1 : now;
        r.id = id;
        r.started = started;
        return started;
    }

    /**
     * @param id the handler's active-message id
     * @param started what {@link #start} returned
     */
    void finished(int id, long started) {
        if (started == 0) {
            return;
        }
        mine.get().started = 0;
        long bound = boundNanos;
        long took = System.nanoTime() - started;
        if (bound == 0 || took <= bound) {
            return;
        }
        SlowHandlerEvent e = new SlowHandlerEvent();
        if (e.isEnabled()) {
            e.worker = worker;
            e.id = id;
            e.took = took;
            e.bound = bound;
            e.commit();
        }
        if (firstTime(id)) {
            LOG.warn("active-message handler {} at worker '{}' ran {} ms, over its bound of {} ms;"
                    + " it holds a transport's receiving thread while it runs (logged once per handler id)",
                    id, worker, took / 1_000_000, bound / 1_000_000);
        }
    }

    private boolean firstTime(int id) {
        int word = id >>> 6;
        long bit = 1L << (id & 63);
        long was;
        do {
            was = logged.get(word);
            if ((was & bit) != 0) {
                return false;
            }
        } while (!logged.compareAndSet(word, was, was | bit));
        return true;
    }
}
