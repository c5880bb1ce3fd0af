package dev.fenceline.transport.sim;

import java.util.PriorityQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.ReentrantLock;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The simulated network: one thread that runs deliveries when they are due. Lanes compute due times
 * so that deliveries within a lane keep post order; ties break by scheduling order.
 */
final class SimFabric implements AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(SimFabric.class);

    private record Event(long due, long seq, Runnable action) implements Comparable<Event> {
        @Override
        public int compareTo(Event o) {
            int c = Long.compare(due, o.due);
            return c != 0 ? c : Long.compare(seq, o.seq);
        }
    }

    private final ReentrantLock lock = new ReentrantLock();
    private final Condition changed = lock.newCondition();
    private final PriorityQueue<Event> events = new PriorityQueue<>();
    private final Thread thread;
    /** Set under a deterministic simulation: deliveries are its timers, on its virtual time. */
    private final SimClock world;
    private long nextSeq;
    private volatile boolean closed;

    /**
     * @param name the delivery thread's name
     * @param world the deterministic simulation to run in, or null for a thread on real time
     */
    SimFabric(String name, SimClock world) {
        this.world = world;
        if (world != null) {
            thread = null;
            return;
        }
        thread = new Thread(this::run, name);
        thread.setDaemon(true);
        thread.start();
    }

    /** @return the fabric's time: {@link System#nanoTime()}, or the simulation's virtual time */
    long now() {
        return world != null ? world.nanoTime() : System.nanoTime();
    }

    /**
     * @param due when to run, in {@link #now()} terms
     * @param action the delivery; runs on the fabric thread (or the simulation's)
     */
    void schedule(long due, Runnable action) {
        if (world != null) {
            world.schedule(due, () -> {
                if (!closed) {
                    action.run();
                }
            });
            return;
        }
        lock.lock();
        try {
            if (closed) {
                return;
            }
            Event e = new Event(due, nextSeq++, action);
            events.add(e);
            if (events.peek() == e) {
                changed.signal();
            }
        } finally {
            lock.unlock();
        }
    }

    private void run() {
        while (true) {
            Event e;
            lock.lock();
            try {
                while (true) {
                    if (closed) {
                        return;
                    }
                    e = events.peek();
                    long now = System.nanoTime();
                    if (e != null && e.due <= now) {
                        events.poll();
                        break;
                    }
                    long wait = e == null ? TimeUnit.SECONDS.toNanos(1) : e.due - now;
                    changed.awaitNanos(wait);
                }
            } catch (InterruptedException ie) {
                return;
            } finally {
                lock.unlock();
            }
            try {
                e.action.run();
            } catch (RuntimeException ex) {
                LOG.error("sim delivery failed", ex);
            }
        }
    }

    @Override
    public void close() {
        lock.lock();
        try {
            closed = true;
            events.clear();
            changed.signalAll();
        } finally {
            lock.unlock();
        }
    }
}
