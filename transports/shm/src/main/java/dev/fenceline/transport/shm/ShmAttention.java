package dev.fenceline.transport.shm;

import java.util.ArrayList;
import org.agrona.concurrent.ManyToOneConcurrentArrayQueue;

/**
 * The lanes with something for the polling thread (gathered completions, an endpoint waiting for
 * room, keepalive probes), queued once each by whoever gave them that; only these are visited, so an
 * idle pass costs the same with ten thousand lanes as with one. Bounded by the gate slots: a lane
 * is queued at most once at a time ({@link ShmLane#markQueued()}).
 */
final class ShmAttention {
    private final ManyToOneConcurrentArrayQueue<ShmLane> queue;
    /** Polling thread: the lanes taken from the queue that still need it. */
    private final ArrayList<ShmLane> attending = new ArrayList<>();
    /** The transport's lane of a connection id, or null once closed. */
    /** Wakes the polling thread. */
    private final Runnable doorbell;

    /**
     * @param slots the gate slots: at most this many lanes at once
     * @param doorbell wakes the polling thread
     */
    ShmAttention(int slots, Runnable doorbell) {
        this.queue = new ManyToOneConcurrentArrayQueue<>(Math.max(2, slots));
        this.doorbell = doorbell;
    }

    /** Any thread: the lane has something for the polling thread. */
    void attend(ShmLane lane) {
        if (lane.markQueued()) {
            if (!queue.offer(lane)) {
                lane.unqueued();
                throw new IllegalStateException("shm: the attention queue is full, with at most one entry per lane");
            }
            doorbell.run();
        }
    }

    /** Polling thread: as {@link #attend}, straight onto its own list (no queue in between). */
    void attendHere(ShmLane lane) {
        if (lane.markQueued()) {
            attending.add(lane);
        }
    }

    /** @return whether a lane waits in the queue (any thread) */
    boolean queued() {
        return !queue.isEmpty();
    }

    /** @return polling thread: whether lanes taken from the queue still need it */
    boolean attending() {
        return !attending.isEmpty();
    }

    /** Polling thread: serves the lanes that asked, keeps those that still need it. */
    void serve() {
        for (ShmLane l; (l = queue.poll()) != null;) {
            attending.add(l);
        }
        for (int i = 0; i < attending.size();) {
            ShmLane l = attending.get(i);
            if (l.unlisted) { // closed: nothing of it is polled any more
                l.unqueued();
                removeAt(i);
                continue;
            }
            l.pollComplete();
            l.answerProbes();
            if (!l.needsPolling()) {
                l.unqueued(); // then look again: something may have come between the look and the unqueue
                if (!l.needsPolling() || !l.markQueued()) {
                    removeAt(i);
                    continue;
                }
            }
            i++;
        }
    }

    /** Removes without shifting: the last one takes its place (order does not matter here). */
    private void removeAt(int i) {
        attending.set(i, attending.get(attending.size() - 1));
        attending.remove(attending.size() - 1);
    }
}
