package dev.fenceline.actor;

import dev.fenceline.LaneEvent;
import dev.fenceline.LaneEventListener;
import java.util.List;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.Executor;
import java.util.concurrent.atomic.AtomicBoolean;
import org.slf4j.LoggerFactory;

/**
 * A worker's lane-event listeners, and their delivery: on the given executor (the actor system's
 * dispatcher), one event at a time, in the order the endpoints published them, never on an
 * endpoint's thread. A listener that throws is logged and keeps its subscription.
 */
final class LaneEventDispatch implements LaneEvents.Sink {
    private final List<LaneEventListener> listeners = new CopyOnWriteArrayList<>();
    private final ConcurrentLinkedQueue<LaneEvent> queue = new ConcurrentLinkedQueue<>();
    private final AtomicBoolean draining = new AtomicBoolean();
    private final Executor executor;

    LaneEventDispatch(Executor executor) {
        this.executor = executor;
    }

    /**
     * @param l a listener
     * @return closing it unsubscribes
     */
    AutoCloseable add(LaneEventListener l) {
        listeners.add(l);
        return () -> listeners.remove(l);
    }

    @Override
    public void publish(LaneEvent event) {
        if (listeners.isEmpty()) {
            return;
        }
        queue.add(event);
        schedule();
    }

    private void schedule() {
        if (draining.compareAndSet(false, true)) {
            try {
                executor.execute(this::drain);
            } catch (RuntimeException shuttingDown) {
                draining.set(false);
                queue.clear(); // the dispatcher is gone: nobody is left to tell
            }
        }
    }

    private void drain() {
        LaneEvent e;
        while ((e = queue.poll()) != null) {
            for (LaneEventListener l : listeners) {
                try {
                    l.onLaneEvent(e);
                } catch (RuntimeException ex) {
                    LoggerFactory.getLogger(LaneEventDispatch.class).warn("a lane event listener failed on {}", e, ex);
                }
            }
        }
        draining.set(false);
        if (!queue.isEmpty()) {
            schedule(); // one came after the last poll
        }
    }
}
