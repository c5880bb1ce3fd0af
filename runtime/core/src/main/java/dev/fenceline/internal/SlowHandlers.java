package dev.fenceline.internal;

import dev.fenceline.jfr.SlowHandlerEvent;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLongArray;
import java.util.function.LongSupplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Notices active-message handlers that run longer than a bound. A handler runs on a transport's
 * receiving thread, so while it runs that thread serves no one else.
 *
 * <p>A call reads no clock: it counts itself in a slot of its thread's own (two ordered writes, no
 * fence, no allocation), because it sits on every message's path and a clock read costs more than
 * the rest of the dispatch. A watchdog looks at the slots every quarter of the bound (1 to 50 ms):
 * the first look that finds a call running dates it, between that look and the one before. A call
 * is over its bound once the time since that first look exceeds it: the watchdog then logs it, once
 * per handler id, with the stack it is stuck in, and when it returns it is a JFR event whose
 * {@code took} is at most {@code resolution} longer than the call ran. A call no look found running
 * ran less than a look's gap, under the bound: it reads no clock on its return either.
 */
final class SlowHandlers {
    private static final Logger LOG = LoggerFactory.getLogger(SlowHandlers.class);
    private static final long SHORTEST_GAP = TimeUnit.MILLISECONDS.toNanos(1);
    private static final long LONGEST_GAP = TimeUnit.MILLISECONDS.toNanos(50);
    /** Every worker's handlers, watched by one daemon thread for the whole process. */
    private static final Set<SlowHandlers> WATCHED = ConcurrentHashMap.newKeySet();
    private static ScheduledExecutorService watchdog;
    private static final VarHandle CALLS;
    private static final VarHandle SEEN;

    static {
        try {
            CALLS = MethodHandles.lookup().findVarHandle(Running.class, "calls", long.class);
            SEEN = MethodHandles.lookup().findVarHandle(Running.class, "seenCall", long.class);
        } catch (ReflectiveOperationException e) {
            throw new ExceptionInInitializerError(e);
        }
    }

    /** Where a call over its bound is told (tests hear it themselves). */
    interface Reporter {
        /**
         * @param s the worker's handlers
         * @param id the handler's id
         * @param took how long the call ran, at most
         * @param resolution how much {@code took} may exceed what it ran
         */
        void overBound(SlowHandlers s, int id, long took, long resolution);
    }

    /** One thread's calls of this worker's handlers. */
    static final class Running {
        final Thread thread = Thread.currentThread();
        /** Starts and returns so far, odd while a call runs (its thread writes it, ordered). */
        volatile long calls;
        /** The running call's handler id: written before {@link #calls}, read after it. */
        int id;
        /** The running call the watchdog found ({@link #calls}' value then), written after the two below. */
        volatile long seenCall;
        /** The watchdog's look that first found {@link #seenCall} running. */
        long seenAt;
        /** The look before it, when that call had not started yet. */
        long seenFrom;
        /** The watchdog's latest look at this slot (watchdog only). */
        long lookedAt;
        /** The call the watchdog logged last, so that it logs a call once (watchdog only). */
        long loggedCall;

        Running(long now) {
            lookedAt = now;
        }
    }

    private final String worker;
    private final LongSupplier clock;
    private final Reporter reporter;
    /** Whether the process's watchdog looks at these handlers (a test looks itself). */
    private final boolean daemon;
    private final AtomicLongArray logged = new AtomicLongArray((RegistrationTable.MAX_AM_ID + 64) / 64);
    private final ThreadLocal<Running> mine;
    private final CopyOnWriteArrayList<Running> running = new CopyOnWriteArrayList<>();
    private volatile long boundNanos;

    SlowHandlers(String worker) {
        this(worker, System::nanoTime, SlowHandlers::report, true);
    }

    /**
     * @param worker the worker's name, for what is reported
     * @param clock {@code System.nanoTime()}, or a test's
     * @param reporter where calls over their bound go
     * @param daemon whether the process's watchdog looks at them, else only {@link #look} calls do
     */
    SlowHandlers(String worker, LongSupplier clock, Reporter reporter, boolean daemon) {
        this.worker = worker;
        this.daemon = daemon;
        this.clock = clock;
        this.reporter = reporter;
        this.mine = ThreadLocal.withInitial(() -> {
            Running r = new Running(clock.getAsLong());
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
        if (!daemon) {
            return;
        }
        if (nanos > 0) {
            watch(this);
        } else {
            WATCHED.remove(this);
        }
    }

    /** @return how long the watchdog waits between looks for a bound: a quarter of it, 1 to 50 ms */
    static long gap(long bound) {
        return Math.max(SHORTEST_GAP, Math.min(LONGEST_GAP, bound / 4));
    }

    private static synchronized void watch(SlowHandlers s) {
        WATCHED.add(s);
        if (watchdog == null) {
            watchdog = Executors.newSingleThreadScheduledExecutor(r -> {
                Thread t = new Thread(r, "fenceline-handler-watchdog");
                t.setDaemon(true);
                return t;
            });
            watchdog.schedule(SlowHandlers::watchAll, gap(s.boundNanos), TimeUnit.NANOSECONDS);
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
        long next = LONGEST_GAP;
        for (SlowHandlers s : WATCHED) {
            try {
                long bound = s.boundNanos;
                if (bound > 0) {
                    next = Math.min(next, gap(bound));
                }
                s.look(s.clock.getAsLong());
            } catch (RuntimeException e) {
                LOG.debug("handler watchdog: {}", e.toString());
            }
        }
        watchdog.schedule(SlowHandlers::watchAll, next, TimeUnit.NANOSECONDS);
    }

    /**
     * One look at every thread's slot (the watchdog's thread; a test's).
     *
     * @param now the clock
     */
    void look(long now) {
        long bound = boundNanos;
        for (Running r : running) {
            long call = (long) CALLS.getAcquire(r);
            if ((call & 1) != 0 && bound > 0) {
                if (r.seenCall != call) { // first found running: it started after the look before
                    r.seenAt = now;
                    r.seenFrom = r.lookedAt;
                    SEEN.setRelease(r, call);
                }
                if (now - r.seenAt > bound && r.loggedCall != call) {
                    r.loggedCall = call;
                    int id = r.id;
                    if ((long) CALLS.getAcquire(r) == call && firstTime(id)) {
                        Throwable where = new Throwable("active-message handler " + id + " still running, here");
                        where.setStackTrace(r.thread.getStackTrace());
                        LOG.warn("active-message handler {} at worker '{}' has run at least {} ms, over its bound of {}"
                                + " ms, on thread {}, which serves nothing else meanwhile (logged once per handler id)",
                                id, worker, (now - r.seenAt) / 1_000_000, bound / 1_000_000, r.thread.getName(), where);
                    }
                }
            }
            r.lookedAt = now;
        }
    }

    /**
     * @param id the handler's active-message id
     * @return the call, for {@link #finished}; 0 when there is no bound, or when this thread is
     *     already in a handler call (a handler that delivers to another in line: the outer call counts)
     */
    long start(int id) {
        if (boundNanos == 0) {
            return 0;
        }
        Running r = mine.get();
        long call = r.calls + 1;
        if ((call & 1) == 0) {
            return 0;
        }
        r.id = id;
        CALLS.setRelease(r, call);
        return call;
    }

    /**
     * @param id the handler's active-message id
     * @param call what {@link #start} returned
     */
    void finished(int id, long call) {
        if (call == 0) {
            return;
        }
        Running r = mine.get();
        CALLS.setRelease(r, call + 1);
        if ((long) SEEN.getAcquire(r) != call) {
            return; // no look found it running: it ran less than a look's gap
        }
        long now = clock.getAsLong();
        if (now - r.seenAt > boundNanos) {
            reporter.overBound(this, id, now - r.seenFrom, r.seenAt - r.seenFrom);
        }
    }

    private static void report(SlowHandlers s, int id, long took, long resolution) {
        long bound = s.boundNanos;
        SlowHandlerEvent e = new SlowHandlerEvent();
        if (e.isEnabled()) {
            e.worker = s.worker;
            e.id = id;
            e.took = took;
            e.resolution = resolution;
            e.bound = bound;
            e.commit();
        }
        if (s.firstTime(id)) {
            LOG.warn("active-message handler {} at worker '{}' ran {} ms, over its bound of {} ms;"
                    + " it holds a transport's receiving thread while it runs (logged once per handler id)",
                    id, s.worker, took / 1_000_000, bound / 1_000_000);
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
