package dev.fenceline.testkit.sim;

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
    private long nextSeq;
    private boolean closed;

    SimFabric(String name) {
        thread = new Thread(this::run, name);
        thread.setDaemon(true);
        thread.start();
    }

    /**
     * @param due when to run, in {@link System#nanoTime()} terms
     * @param action the delivery; runs on the fabric thread
     */
    void schedule(long due, Runnable action) {
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
