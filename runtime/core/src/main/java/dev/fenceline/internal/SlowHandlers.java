package dev.fenceline.internal;

import dev.fenceline.jfr.SlowHandlerEvent;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLongArray;
import java.util.concurrent.locks.LockSupport;
import java.util.function.LongSupplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Notices active-message handlers that run longer than a bound. A handler runs on a transport's
 * receiving thread, so while it runs that thread serves no one else.
 *
 * <p>A call reads no clock: it marks itself in a slot of its thread's own (two ordered writes, no
 * fence, no allocation), because it sits on every message's path and two clock reads cost more than
 * the rest of the dispatch. A watchdog looks at the slots every half of the bound (1 to 50 ms: with
 * the default bound of 100 ms, 20 looks a second): the first look that finds a call running dates
 * it, between the clock read after it found the call and the previous look, which had not. A call
 * is over its bound once the time since it was found exceeds the bound, so the watchdog's own delay
 * never blames a handler; on time, the watchdog finds every call that runs longer than the bound
 * plus the gap between its looks. A call a look found reads the clock once when it returns; if it
 * was over its bound it is then a JFR event whose {@code took} is at most {@code resolution} longer
 * than it ran, and a log line the first time per handler id. A call a look finds still running a
 * bound after it was found is logged with the stack it is stuck in, the first time per handler id
 * (apart from the lines of calls that returned: a handler that once returned late may later hang).
 * A call no look found reads no clock on its return either.
 */
final class SlowHandlers {
    private static final Logger LOG = LoggerFactory.getLogger(SlowHandlers.class);
    private static final long SHORTEST_GAP = TimeUnit.MILLISECONDS.toNanos(1);
    private static final long LONGEST_GAP = TimeUnit.MILLISECONDS.toNanos(50);
    /** A slot's word: the call's number above these bits, its handler id, and whether it runs. */
    private static final int ID_SHIFT = 1;
    private static final int NUMBER_SHIFT = 17;
    private static final int ID_MASK = (1 << (NUMBER_SHIFT - ID_SHIFT)) - 1;
    private static final long RUNNING = 1;
    /** Every worker's handlers, watched by one daemon thread for the whole process. */
    private static final Set<SlowHandlers> WATCHED = ConcurrentHashMap.newKeySet();
    private static Thread watchdog;
    private static final VarHandle CALL;
    private static final VarHandle SEEN;

    static {
        if (RegistrationTable.MAX_AM_ID > ID_MASK) {
            throw new ExceptionInInitializerError("active-message ids do not fit a slot's word");
        }
        try {
            CALL = MethodHandles.lookup().findVarHandle(Running.class, "call", long.class);
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
         * @param bound the bound it went over
         */
        void overBound(SlowHandlers s, int id, long took, long resolution, long bound);
    }

    /** One thread's calls of this worker's handlers. */
    static final class Running {
        final Thread thread = Thread.currentThread();
        /**
         * The latest call: its number, handler id and {@link #RUNNING} bit in one word, so that a
         * look reads them together (its thread writes it, ordered).
         */
        volatile long call;
        /** The running call the watchdog found (its word), written after the two below. */
        volatile long seenCall;
        /** The clock when the watchdog found {@link #seenCall} running. */
        long seenAt;
        /** The look before, which had not found it: it started after this. */
        long seenFrom;
        /** When the watchdog's latest look at this slot began (watchdog only). */
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
    /** The ids logged on return, and those logged with their stack while they ran (once each). */
    private final AtomicLongArray loggedLate = new AtomicLongArray((RegistrationTable.MAX_AM_ID + 64) / 64);
    private final AtomicLongArray loggedStuck = new AtomicLongArray((RegistrationTable.MAX_AM_ID + 64) / 64);
    private volatile boolean closed;
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
        this.clock = clock;
        this.reporter = reporter;
        this.daemon = daemon;
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
        if (!daemon || closed) {
            return;
        }
        if (nanos > 0) {
            watch(this);
        } else {
            WATCHED.remove(this);
        }
    }

    /** @return how long the watchdog waits between looks for a bound: half of it, 1 to 50 ms */
    static long gap(long bound) {
        return Math.max(SHORTEST_GAP, Math.min(LONGEST_GAP, bound / 2));
    }

    private static synchronized void watch(SlowHandlers s) {
        if (s.closed) {
            return;
        }
        WATCHED.add(s);
        if (watchdog == null) {
            startWatchdog();
        } else {
            LockSupport.unpark(watchdog); // it looks now, and then as often as the new bound asks
        }
    }

    /** Starts the watchdog thread (the caller holds the class's lock). */
    private static void startWatchdog() {
        Thread t = new Thread(SlowHandlers::watchLoop, "fenceline-handler-watchdog");
        t.setDaemon(true);
        t.start();
        watchdog = t;
    }

    /** The watchdog ended, whatever the cause: another takes over if any worker is still watched. */
    private static synchronized void watchdogEnded() {
        if (watchdog == Thread.currentThread()) {
            watchdog = null;
            if (!WATCHED.isEmpty()) {
                startWatchdog();
            }
        }
    }

    /** @return whether the watchdog thread runs (tests) */
    static synchronized boolean watchdogRuns() {
        return watchdog != null && watchdog.isAlive();
    }

    /** @return whether the watchdog goes on: false once no worker is watched (it ends; the next starts one) */
    private static synchronized boolean stillWatching() {
        if (WATCHED.isEmpty()) {
            watchdog = null;
            return false;
        }
        return true;
    }

    /** @return how many workers' handlers are watched (tests) */
    static int watched() {
        return WATCHED.size();
    }

    /** The worker closed: its handlers are watched no more. */
    void close() {
        synchronized (SlowHandlers.class) {
            closed = true;
            WATCHED.remove(this);
        }
    }

    private static void watchLoop() {
        try {
            while (stillWatching()) {
                long next = LONGEST_GAP;
                List<Overdue> overdue = new ArrayList<>(0);
                for (SlowHandlers s : WATCHED) {
                    long bound = s.boundNanos;
                    if (bound > 0) {
                        next = Math.min(next, gap(bound));
                    }
                    try {
                        s.look(overdue);
                    } catch (Throwable e) { // the watchdog lives on: every worker's handlers rest on it
                        warn("looking at worker '" + s.worker + "'", e);
                    }
                }
                for (Overdue o : overdue) { // after every worker's look: a slow log delays no dating
                    try {
                        o.log();
                    } catch (Throwable e) {
                        warn("logging a handler over its bound", e);
                    }
                }
                Thread.interrupted(); // an interrupt would make every park return at once
                LockSupport.parkNanos(next);
            }
        } finally {
            watchdogEnded();
        }
    }

    private static void warn(String what, Throwable e) {
        try {
            LOG.warn("handler watchdog: {}: {}", what, e.toString());
        } catch (Throwable ignored) { // a logging back end that fails: nothing better to tell it with
        }
    }

    /** A call a look found over its bound, logged after the look. */
    record Overdue(SlowHandlers handlers, Running slot, long call, long runFor, long bound) {
        /** Logs it, once per handler id, with its stack, if it still runs. */
        void log() {
            StackTraceElement[] stack = slot.thread.getStackTrace();
            if ((long) CALL.getAcquire(slot) != call) {
                return; // returned meanwhile: the stack is another's; its return reports it
            }
            int id = id(call);
            if (firstTime(handlers.loggedStuck, id)) {
                Throwable where = new Throwable("active-message handler " + id + " still running, here");
                where.setStackTrace(stack);
                LOG.warn("active-message handler {} at worker '{}' has run at least {} ms, over its bound of {} ms,"
                        + " on thread {}, which serves nothing else meanwhile (logged once per handler id)", id,
                        handlers.worker, runFor / 1_000_000, bound / 1_000_000, slot.thread.getName(), where);
            }
        }
    }

    /**
     * One look at every thread's slot (the watchdog's thread; a test's).
     *
     * @param overdue gets the calls found over their bound, to be logged once every worker was looked at
     */
    void look(List<Overdue> overdue) {
        long lookAt = clock.getAsLong(); // before any slot is read: a call found later started after it
        long bound = boundNanos;
        for (Running r : running) {
            long call = (long) CALL.getAcquire(r);
            if ((call & RUNNING) != 0) {
                if (r.seenCall != call) {
                    r.seenFrom = r.lookedAt;
                    r.seenAt = clock.getAsLong(); // read after the call was found: it ran by then
                    SEEN.setRelease(r, call);
                }
                if (bound > 0 && lookAt - r.seenAt > bound && r.loggedCall != call) {
                    r.loggedCall = call;
                    overdue.add(new Overdue(this, r, call, lookAt - r.seenAt, bound));
                }
            }
            r.lookedAt = lookAt;
        }
    }

    private static int id(long call) {
        return (int) (call >>> ID_SHIFT) & ID_MASK;
    }

    /**
     * @param id the handler's active-message id
     * @return the call, for {@link #finished}; 0 when there is no bound, or when this thread is
     *     already in a call of this worker's handlers (a handler that delivers to another in line:
     *     the outer call counts)
     */
    long start(int id) {
        if (boundNanos == 0) {
            return 0;
        }
        Running r = mine.get();
        long last = r.call;
        if ((last & RUNNING) != 0) {
            return 0;
        }
        long call = ((last >>> NUMBER_SHIFT) + 1) << NUMBER_SHIFT | (long) id << ID_SHIFT | RUNNING;
        CALL.setRelease(r, call);
        return call;
    }

    /** @param call what {@link #start} returned (its word names the handler) */
    void finished(long call) {
        if (call == 0) {
            return;
        }
        Running r = mine.get();
        CALL.setRelease(r, call & ~RUNNING);
        if ((long) SEEN.getAcquire(r) != call) {
            return; // no look found it running
        }
        long bound = boundNanos;
        if (bound == 0) {
            return; // the bound was lifted meanwhile
        }
        long now = clock.getAsLong();
        if (now - r.seenAt > bound) {
            reporter.overBound(this, id(call), now - r.seenFrom, r.seenAt - r.seenFrom, bound);
        }
    }

    private static void report(SlowHandlers s, int id, long took, long resolution, long bound) {
        SlowHandlerEvent e = new SlowHandlerEvent();
        if (e.isEnabled()) {
            e.worker = s.worker;
            e.id = id;
            e.took = took;
            e.resolution = resolution;
            e.bound = bound;
            e.commit();
        }
        if (firstTime(s.loggedLate, id)) {
            LOG.warn("active-message handler {} at worker '{}' ran {} ms at most ({} at least), over its bound of {}"
                    + " ms; it holds a transport's receiving thread while it runs (logged once per handler id)",
                    id, s.worker, took / 1_000_000, (took - resolution) / 1_000_000, bound / 1_000_000);
        }
    }

    private static boolean firstTime(AtomicLongArray logged, int id) {
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
