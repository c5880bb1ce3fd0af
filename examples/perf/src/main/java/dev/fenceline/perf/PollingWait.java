package dev.fenceline.perf;

import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.TimeUnit;

/**
 * How the latency rows wait, the way ucx_perftest waits for its completion: polling (spin, then
 * yield), never parked until another thread wakes the waiter, a wake-up that would be measured as
 * the operation's latency; and looking at the clock for the deadline only now and then.
 */
final class PollingWait {
    private PollingWait() {
    }

    /**
     * Whether a waiting loop looks at the clock (its deadline) on this turn: every 256th. A clock
     * read is tens of nanoseconds on this KVM guest, and one on every turn of the loop that waits
     * for a pong delayed seeing it by part of that, measured as latency; ucx_perftest's loop polls
     * memory alone. Turns that yield take microseconds, so the deadline is still seen within a
     * millisecond or so of passing.
     */
    static boolean clockDue(int spins) {
        return (spins & 255) == 255;
    }

    /**
     * Spin briefly, then yield: a poller that only spins starves the event loops and actors it is
     * waiting for on a machine with few cores.
     */
    static void idle(int spins) {
        if (spins >= 0 && spins < 200) { // past Integer.MAX_VALUE turns it keeps yielding
            Thread.onSpinWait();
        } else {
            Thread.yield();
        }
    }

    /**
     * Waits for one operation by polling.
     *
     * @param s the operation's stage
     * @param timeoutSeconds the longest wait, counted from the first look at the clock
     * @throws java.util.concurrent.TimeoutException if it did not complete in time
     * @throws java.util.concurrent.ExecutionException if it failed
     * @throws InterruptedException if interrupted while taking its result
     */
    static void await(CompletionStage<?> s, long timeoutSeconds) throws Exception {
        CompletableFuture<?> f = s.toCompletableFuture();
        long deadline = 0; // set at the first look at the clock: an operation that completes soon reads it never
        for (int spins = 0; !f.isDone(); spins++) {
            if (clockDue(spins)) {
                long now = System.nanoTime();
                if (deadline == 0) {
                    deadline = now + TimeUnit.SECONDS.toNanos(timeoutSeconds);
                } else if (now - deadline > 0) {
                    throw new java.util.concurrent.TimeoutException("no completion within " + timeoutSeconds + " s: "
                            + f);
                }
            }
            idle(spins);
        }
        f.get(); // the result, or the failure as ExecutionException
    }
}
