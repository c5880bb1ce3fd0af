package dev.fenceline.testkit.world;

import java.util.ArrayList;
import java.util.PriorityQueue;
import java.util.SplittableRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.BooleanSupplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The single-threaded world of a deterministic simulation: every actor's mailbox run, every
 * scheduler timer and every sim delivery is a task here, and the thread that pumps runs them one
 * at a time, choosing among the ready ones with a seeded random. Time is virtual: it stands still
 * while anything is ready and jumps to the next timer when nothing is. With the same seed and the
 * same calls from the pumping thread, a run repeats exactly.
 *
 * <p>One world per JVM at a time ({@link #open}); Pekko builds the scheduler and the dispatcher's
 * executor from class names, so they find it here. The public face is
 * {@code dev.fenceline.testkit.DeterministicSimulation}.
 */
public final class World implements AutoCloseable, dev.fenceline.transport.sim.SimClock {
    private static final Logger LOG = LoggerFactory.getLogger(World.class);
    private static final AtomicReference<World> CURRENT = new AtomicReference<>();
    /** Virtual time starts here, so that no clock reading is 0 (the runtime uses 0 for "never"). */
    private static final long EPOCH = TimeUnit.SECONDS.toNanos(1);

    /** A task due at a virtual time; ties run in scheduling order. */
    static final class Timer implements Comparable<Timer> {
        final long due;
        final long seq;
        final Runnable action;
        volatile boolean cancelled;

        Timer(long due, long seq, Runnable action) {
            this.due = due;
            this.seq = seq;
            this.action = action;
        }

        @Override
        public int compareTo(Timer o) {
            int c = Long.compare(due, o.due);
            return c != 0 ? c : Long.compare(seq, o.seq);
        }
    }

    private final long seed;
    private SplittableRandom random;
    private final ReentrantLock lock = new ReentrantLock();
    private final Condition arrived = lock.newCondition();
    private final ArrayList<Runnable> ready = new ArrayList<>();
    private final PriorityQueue<Timer> timers = new PriorityQueue<>();
    private long timerSeq;
    private volatile long now = EPOCH;
    private long steps;
    private volatile boolean closed;
    /** The thread that drives the world once it has settled; work handed in by others is a leak. */
    private volatile Thread owner;
    private volatile boolean foreignReported;
    private final java.util.concurrent.atomic.AtomicLong foreign = new java.util.concurrent.atomic.AtomicLong();
    /** Whether the driver is pumping: a task that waits on the world would pump inside a task. */
    private boolean pumping;
    private volatile boolean lateReported;

    private World(long seed) {
        this.seed = seed;
        this.random = new SplittableRandom(seed);
    }

    /**
     * @param seed chooses among ready tasks
     * @return the new current world
     * @throws IllegalStateException if another world is open in this JVM
     */
    public static World open(long seed) {
        World w = new World(seed);
        if (!CURRENT.compareAndSet(null, w)) {
            throw new IllegalStateException("a deterministic simulation is already running in this JVM (seed "
                    + CURRENT.get().seed + "); close it first");
        }
        dev.fenceline.transport.sim.SimClock.install(w); // sim transports with deterministic = on deliver here
        return w;
    }

    /**
     * @param what who needs it, for the message
     * @return the open world
     * @throws IllegalStateException if none is open
     */
    public static World require(String what) {
        World w = CURRENT.get();
        if (w == null) {
            throw new IllegalStateException(what + " runs only inside a deterministic simulation (start one with"
                    + " DeterministicSimulation.start)");
        }
        return w;
    }

    /** @return the seed */
    public long seed() {
        return seed;
    }

    /** @return virtual nanoseconds, on an arbitrary origin */
    @Override
    public long nanoTime() {
        return now;
    }

    /** @return virtual nanoseconds since the world opened */
    public long elapsedNanos() {
        return now - EPOCH;
    }

    /** @return tasks run so far */
    public long steps() {
        lock.lock();
        try {
            return steps;
        } finally {
            lock.unlock();
        }
    }

    /**
     * Makes a task ready; any thread may call it.
     *
     * @param task what to run
     */
    public void execute(Runnable task) {
        if (!accept(task)) {
            return;
        }
        lock.lock();
        try {
            ready.add(task);
            arrived.signal();
        } finally {
            lock.unlock();
        }
    }

    @Override
    public void schedule(long dueNanos, Runnable action) {
        at(dueNanos, action);
    }

    /**
     * @param due the virtual time to run it at (the past means now)
     * @param action what to run
     * @return the timer, to cancel
     */
    Timer at(long due, Runnable action) {
        if (!accept(action)) {
            return new Timer(due, -1, action); // never runs
        }
        lock.lock();
        try {
            Timer t = new Timer(due, timerSeq++, action);
            timers.add(t);
            arrived.signal();
            return t;
        } finally {
            lock.unlock();
        }
    }

    /**
     * Work handed in by a thread other than the driver arrives at a moment the seed does not
     * choose, so the run stops being repeatable: count it and say so once, naming the thread. Work
     * handed to a closed world is dropped.
     */
    private boolean accept(Object task) {
        if (closed) {
            if (!lateReported) {
                lateReported = true;
                LOG.warn("deterministic simulation (seed {}) is closed: dropping {} (the runtime did not finish"
                        + " closing inside it)", seed, task);
            }
            return false;
        }
        Thread o = owner;
        if (o == null || Thread.currentThread() == o) {
            return true;
        }
        foreign.incrementAndGet();
        if (!foreignReported) {
            foreignReported = true;
            LOG.warn("deterministic simulation (seed {}): thread {} handed in {}; runs may no longer repeat (is"
                    + " something completing futures on a pool of its own?)", seed, Thread.currentThread().getName(),
                    task, new Throwable("handed in here"));
        }
        return true;
    }

    /**
     * Runs ready tasks (never timers: time stands still) while {@code keepGoing}, for a thread that
     * keeps the world moving while its owner is blocked in a call that waits for actors (Pekko's
     * start-up waits for its logger, for one).
     *
     * @param keepGoing until when
     */
    public void pumpReadyWhile(BooleanSupplier keepGoing) {
        while (keepGoing.getAsBoolean()) {
            if (!stepReady()) {
                lock.lock();
                try {
                    if (ready.isEmpty()) {
                        arrived.awaitNanos(TimeUnit.MILLISECONDS.toNanos(1));
                    }
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                    return;
                } finally {
                    lock.unlock();
                }
            }
        }
    }

    /**
     * Runs ready tasks until none is left, then starts the seeded schedule afresh: what ran before
     * (a start-up with other threads involved) leaves no trace in the choices that follow.
     */
    public void settleAndReseed() {
        while (stepReady()) {
            // run everything ready
        }
        lock.lock();
        try {
            random = new SplittableRandom(seed);
            steps = 0;
            owner = Thread.currentThread();
        } finally {
            lock.unlock();
        }
    }

    /** @return tasks other threads handed in since the world settled (0 for a repeatable run) */
    public long foreignTasks() {
        return foreign.get();
    }

    /** From now on (closing the runtime) other threads may hand in work without a warning. */
    public void ending() {
        owner = null;
    }

    private boolean stepReady() {
        lock.lock();
        try {
            if (ready.isEmpty()) {
                return false;
            }
        } finally {
            lock.unlock();
        }
        return step();
    }

    /**
     * Runs one task: a ready one chosen by the seed, or else the next timer (time jumps to it).
     *
     * @return false if there was nothing to run
     */
    boolean step() {
        Runnable next;
        lock.lock();
        try {
            if (!ready.isEmpty()) {
                int i = random.nextInt(ready.size());
                int last = ready.size() - 1;
                next = ready.get(i);
                ready.set(i, ready.get(last));
                ready.remove(last);
            } else {
                Timer t;
                do {
                    t = timers.poll();
                } while (t != null && t.cancelled);
                if (t == null) {
                    return false;
                }
                now = Math.max(now, t.due);
                next = t.action;
            }
            steps++;
        } finally {
            lock.unlock();
        }
        try {
            next.run();
        } catch (RuntimeException e) { // as a pool thread would: the task's owner reports its own failures
            LOG.error("a task of the deterministic simulation (seed {}) failed", seed, e);
        }
        return true;
    }

    /**
     * Pumps until {@code done}. When nothing is left to run, waits (real time) for another thread to
     * hand in work, up to {@code idleLimit}.
     *
     * @param done when to stop
     * @param idleLimit how long to wait, in real nanoseconds, while nothing is ready or due
     * @param virtualLimit how much virtual time may pass (timers such as keepalive never let the
     *     world go idle, so a stage that never completes would otherwise be pumped for ever)
     * @param what the awaited thing, for the message
     * @throws IllegalStateException if the world stays idle that long, or {@code virtualLimit}
     *     passes, before {@code done}; if the thread is interrupted; or if called from a task the
     *     world is running (the task's actor could not run again until it returned)
     */
    public void pumpUntil(BooleanSupplier done, long idleLimit, long virtualLimit, String what) {
        if (pumping) {
            throw new IllegalStateException("waiting on the deterministic simulation from inside one of its tasks"
                    + " (a callback or an actor): return and wait from the driving thread instead");
        }
        pumping = true;
        try {
            pump(done, idleLimit, virtualLimit, what);
        } finally {
            pumping = false;
        }
    }

    private void pump(BooleanSupplier done, long idleLimit, long virtualLimit, String what) {
        long idleSince = 0;
        long deadline = now + virtualLimit;
        while (!done.getAsBoolean()) {
            if (Thread.interrupted()) {
                Thread.currentThread().interrupt();
                throw new IllegalStateException("interrupted while waiting for " + what);
            }
            if (now > deadline) {
                throw new IllegalStateException("deterministic simulation (seed " + seed + "): " + what
                        + " is not done after " + virtualLimit / 1_000_000 + " ms of virtual time");
            }
            if (step()) {
                idleSince = 0;
                continue;
            }
            long t = System.nanoTime();
            if (idleSince == 0) {
                idleSince = t;
            } else if (t - idleSince > idleLimit) {
                throw new IllegalStateException("deterministic simulation (seed " + seed + ") has nothing left to run"
                        + " at virtual time " + elapsedNanos() / 1000 + " us, and " + what + " is not done");
            }
            lock.lock();
            try {
                if (ready.isEmpty() && timers.isEmpty() && !closed) {
                    arrived.awaitNanos(TimeUnit.MILLISECONDS.toNanos(1));
                }
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new IllegalStateException("interrupted while pumping the simulation", e);
            } finally {
                lock.unlock();
            }
        }
    }

    /**
     * Runs everything due up to {@code until} (virtual), then sets the clock there.
     *
     * @param until a virtual time
     */
    public void runUntilVirtual(long until) {
        if (pumping) {
            throw new IllegalStateException("advancing the deterministic simulation from inside one of its tasks");
        }
        while (true) {
            lock.lock();
            boolean more;
            try {
                Timer head;
                while ((head = timers.peek()) != null && head.cancelled) {
                    timers.poll(); // or step() would run the next live timer, however late
                }
                more = !ready.isEmpty() || head != null && head.due <= until;
            } finally {
                lock.unlock();
            }
            if (!more || !step()) {
                break;
            }
        }
        now = Math.max(now, until);
    }

    /** Drops what is left and lets another world open. */
    @Override
    public void close() {
        lock.lock();
        try {
            closed = true;
            ready.clear();
            timers.clear();
            arrived.signalAll();
        } finally {
            lock.unlock();
        }
        dev.fenceline.transport.sim.SimClock.uninstall(this);
        CURRENT.compareAndSet(this, null);
    }
}
