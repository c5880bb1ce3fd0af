package dev.fenceline.actor;

import dev.fenceline.FencelineException;
import dev.fenceline.internal.VarHandles;
import dev.fenceline.spi.support.Tracing;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.util.concurrent.ConcurrentLinkedQueue;

/**
 * The batching front of an endpoint actor's mailbox (like Aeron's command queue): calling threads
 * queue requests here and at most one drain message is in the mailbox at a time, so a burst of
 * submissions costs one message. The count of submissions stamps the fast path's grant. Only the
 * actor takes from it.
 */
final class SubmissionQueue {
    private final ConcurrentLinkedQueue<Request> queue = new ConcurrentLinkedQueue<>();
    private static final VarHandle DRAIN_SCHEDULED = VarHandles.field(MethodHandles.lookup(), "drainScheduled",
            boolean.class);
    private static final VarHandle SUBMITTED = VarHandles.field(MethodHandles.lookup(), "submitted", long.class);

    /** Fields with handles rather than atomic objects: a worker holds thousands of these queues. */
    private volatile boolean drainScheduled;
    /** Submissions ever offered; a grant is valid only while it equals the grant's stamp. */
    private volatile long submitted;
    /** Actor only: submissions ever taken. */
    private long polled;
    private volatile Runnable wakeup = () -> { };
    /** Set when the actor takes no more submissions (failed, closed or stopped): submitters fail their own. */
    private volatile FencelineException terminal;
    /** What a flush failed by the end reports, or null (component tests). */
    private final ImplicitErrors implicit;

    /** A queue whose flushes, failed by the end, report the end alone (component tests). */
    SubmissionQueue() {
        this(null);
    }

    /** @param implicit the endpoint's failed implicit operations, which a flush failed by the end reports */
    SubmissionQueue(ImplicitErrors implicit) {
        this.implicit = implicit;
    }

    /** @param w tells the actor to drain; set once by the actor's creator */
    void wakeup(Runnable w) {
        this.wakeup = w;
    }

    /** Tells the actor to drain, whether or not anything was submitted (an awaited answer came). */
    void wake() {
        wakeup.run();
    }

    /**
     * @param r the request; after this it belongs to the actor (or, once the endpoint ended, fails
     *     on this thread)
     */
    void submit(Request r) {
        // Before the offer: a grant stamped earlier is void from now on.
        if (r.trace == null) { // a fast-path attempt that fell back took it already
            r.trace = Tracing.take();
        }
        r.submissionNumber = (long) SUBMITTED.getAndAdd(this, 1L) + 1;
        queue.offer(r);
        FencelineException t = terminal;
        if (t != null) {
            // The actor may already have drained for the last time: fail what is left here, so that
            // nothing submitted can hang. Each request is polled by exactly one thread.
            Request left;
            while ((left = queue.poll()) != null) {
                left.fail(left.kind == Request.Kind.FLUSH && implicit != null ? implicit.endOfFlushSeen(
                        left.submissionNumber, t) : t);
            }
            return;
        }
        if (DRAIN_SCHEDULED.compareAndSet(this, false, true)) {
            wakeup.run();
        }
    }

    /** @return submissions ever offered */
    long submitted() {
        return submitted;
    }

    /** @return actor only: submissions ever taken */
    long polled() {
        return polled;
    }

    /** @return the error every later submission fails with, or null while the actor takes them */
    FencelineException terminal() {
        return terminal;
    }

    /** @param e from now on submitters fail their own requests with it (the first end wins) */
    void terminate(FencelineException e) {
        if (terminal == null) {
            terminal = e;
        }
    }

    /** Actor: the drain message was received; later submissions schedule another. */
    void drainStarted() {
        drainScheduled = false;
    }

    /** Actor: more remains after a batch; keep the flag and send another drain message. */
    void drainAgain() {
        drainScheduled = true;
        wakeup.run();
    }

    /** @return actor: the next submitted request, left in the queue, or null */
    Request peek() {
        return queue.peek();
    }

    /** @return actor: the next submitted request, or null */
    Request poll() {
        Request r = queue.poll();
        if (r != null) {
            polled++;
        }
        return r;
    }
}
