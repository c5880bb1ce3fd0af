package dev.fenceline.transport.shm;

import java.util.Iterator;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.function.LongConsumer;
import java.util.function.LongSupplier;

/**
 * A lane's keepalive probes waiting for the peer process's heartbeat to move: each remembers the
 * count when it was queued, and is answered once the count differs, proof that the process runs
 * (a message through the ring is not, while a slow handler holds the peer's polling thread). Any
 * thread queues; the polling thread answers. Apart from {@link ShmLane} because most lanes never
 * get a probe: the lane makes one of these at its first.
 */
final class HeartbeatProbes {
    private final LongSupplier heartbeat;
    private final LongConsumer answered;
    /** {token, the heartbeat count when it was queued}, oldest first. */
    private final ConcurrentLinkedQueue<long[]> waiting = new ConcurrentLinkedQueue<>();

    /**
     * @param heartbeat reads the peer process's heartbeat count
     * @param answered takes the token of each probe answered (on the polling thread)
     */
    HeartbeatProbes(LongSupplier heartbeat, LongConsumer answered) {
        this.heartbeat = heartbeat;
        this.answered = answered;
    }

    /** Queues a probe against the heartbeat count now. */
    void add(long token) {
        waiting.add(new long[] {token, heartbeat.getAsLong()});
    }

    /** @return whether no probe waits */
    boolean isEmpty() {
        return waiting.isEmpty();
    }

    /**
     * Polling thread: takes out the probes the peer's heartbeat moved past since they were queued,
     * and hands each one's token on, oldest first. Reads the heartbeat only if a probe waits.
     */
    void answer() {
        if (waiting.isEmpty()) {
            return;
        }
        long beat = heartbeat.getAsLong();
        for (Iterator<long[]> it = waiting.iterator(); it.hasNext();) {
            long[] p = it.next();
            if (p[1] != beat) {
                it.remove();
                answered.accept(p[0]);
            }
        }
    }
}
