package dev.fenceline.actor;

import dev.fenceline.FencelineException;
import dev.fenceline.LaneInfo;
import dev.fenceline.WorkerAddress;
import dev.fenceline.spi.RequestTrace;
import dev.fenceline.spi.Tracing;
import java.util.List;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * What an endpoint's facade and its actor share: the submission queue (the batching front of the
 * actor's mailbox, like Aeron's command queue) and what the actor publishes for other threads. Only
 * the actor consumes the queue and writes the published fields.
 */
public final class EndpointChannel {
    private final String name;

    /**
     * @param number the failed operation's submission number (for the fast path: the submission
     *     count when it failed, so that it sorts after everything submitted before it)
     * @param e its error, kept for the first flush submitted after it
     */
    void implicitFailed(FencelineException e, long number) {
        implicitErrors.putIfAbsent(number, e);
    }

    /**
     * @param before a flush's submission number (exclusive bound)
     * @return the first error of an implicit operation submitted before it, or null; the errors
     *     before it are consumed (one flush reports one)
     */
    FencelineException takeImplicitError(long before) {
        java.util.Map.Entry<Long, FencelineException> first = implicitErrors.firstEntry();
        if (first == null || first.getKey() >= before) {
            return null;
        }
        implicitErrors.headMap(before).clear();
        return first.getValue();
    }

    /** @return the submission count now: what a flush issued now comes after */
    long submissionCount() {
        return submitted.get();
    }
    private final WorkerAddress peer;
    private final long endpointId = new java.security.SecureRandom().nextLong();
    private final ConcurrentLinkedQueue<Request> submissions = new ConcurrentLinkedQueue<>();
    private final AtomicBoolean drainScheduled = new AtomicBoolean();
    private final EndpointCounters counters = new EndpointCounters();
    private volatile Runnable wakeup = () -> { };
    private volatile List<LaneInfo> lanes = List.of();
    private volatile boolean closing;
    private volatile FencelineException failure;
    /** Set when the actor takes no more submissions (failed, closed or stopped): submitters fail their own. */
    private volatile FencelineException terminal;
    /** Submissions ever offered; a grant is valid only while it equals the grant's stamp. */
    private final java.util.concurrent.atomic.AtomicLong submitted = new java.util.concurrent.atomic.AtomicLong();
    /** Actor only: submissions ever polled. */
    private long polled;
    private volatile Grant grant;
    /** Operations the fast path performed (they never reach the actor's counters). */
    private final dev.fenceline.internal.ThreadCounter fastOperations = new dev.fenceline.internal.ThreadCounter();

    /**
     * Permission for calling threads to perform operations directly on {@code lane}: published by
     * the actor when nothing of the endpoint is outstanding, valid until anything is submitted.
     *
     * @param lane the lane that performs them
     * @param stamp the submission count when it was published
     */
    record Grant(dev.fenceline.spi.DirectAccess lane, long stamp) {
    }

    /** @return the grant if it is still valid, else null */
    Grant validGrant() {
        Grant g = grant;
        return g != null && g.stamp() == submitted.get() ? g : null;
    }

    /** Actor: publishes a grant if every submission so far has been taken (and, by the caller, completed). */
    void publishGrant(dev.fenceline.spi.DirectAccess lane) {
        long n = submitted.get();
        grant = n == polled ? new Grant(lane, n) : null;
    }

    void revokeGrant() {
        grant = null;
    }

    void fastOperation() {
        fastOperations.increment();
        RequestTrace t = Tracing.take();
        if (t != null) { // done and visible on this thread, before the call returns
            t.admitted(RequestTrace.DIRECT, -1, true, true);
            t.visible(-1);
        }
    }

    /** Fast-path operations refused (a bad key, a closed region): counted as issued and failed. */
    private final java.util.concurrent.atomic.LongAdder fastFailures = new java.util.concurrent.atomic.LongAdder();

    void fastFailure() {
        fastFailures.increment();
    }

    /** @return fast-path operations that were refused */
    public long fastFailures() {
        return fastFailures.sum();
    }

    /** Flushes the facade completed itself, under a grant. */
    private final java.util.concurrent.atomic.LongAdder fastFlushes = new java.util.concurrent.atomic.LongAdder();

    void fastFlush() {
        fastFlushes.increment();
    }

    /** @return flushes completed under a grant, without the actor */
    public long fastFlushes() {
        return fastFlushes.sum();
    }

    /** @return operations the fast path performed */
    public long fastOperations() {
        return fastOperations.sum();
    }

    /** Errors of implicit operations by submission number, until a later flush reports them. */
    private final java.util.concurrent.ConcurrentSkipListMap<Long, FencelineException> implicitErrors =
            new java.util.concurrent.ConcurrentSkipListMap<>();

    /**
     * @param name the endpoint's name, for messages
     * @param peer the peer worker
     */
    public EndpointChannel(String name, WorkerAddress peer) {
        this.name = name;
        this.peer = peer;
    }

    /** @return the endpoint's name */
    public String name() {
        return name;
    }

    /** @return the endpoint's random id, which software protocols use to deduplicate re-sent operations */
    public long endpointId() {
        return endpointId;
    }

    /** @return the peer worker */
    public WorkerAddress peer() {
        return peer;
    }

    /** @return the counters */
    public EndpointCounters counters() {
        return counters;
    }

    /** @param wakeup tells the actor to drain; set once by the actor's creator */
    public void wakeup(Runnable wakeup) {
        this.wakeup = wakeup;
    }

    /**
     * Queues a request; at most one drain message is in the actor's mailbox at a time, so a burst of
     * submissions costs one mailbox message.
     *
     * @param r the request
     */
    public void submit(Request r) {
        // Before the offer: a grant stamped earlier is void from now on.
        r.trace = Tracing.take();
        r.submissionNumber = submitted.incrementAndGet();
        submissions.offer(r);
        FencelineException t = terminal;
        if (t != null) {
            // The actor may already have drained for the last time: fail what is left here, so that
            // nothing submitted can hang. Each request is polled by exactly one thread.
            Request left;
            while ((left = submissions.poll()) != null) {
                left.fail(t);
            }
            return;
        }
        if (drainScheduled.compareAndSet(false, true)) {
            wakeup.run();
        }
    }

    /** @return the error every later submission fails with, or null while the actor takes them */
    public FencelineException terminal() {
        return terminal;
    }

    /**
     * Actor side: from now on submitters fail their own requests with {@code e}.
     *
     * @param e the endpoint's end
     */
    void terminate(FencelineException e) {
        if (terminal == null) {
            terminal = e;
        }
    }

    /** Actor side: the drain message was received; later submissions schedule another. */
    void drainStarted() {
        drainScheduled.set(false);
    }

    /** Actor side: more remains after a batch; keep the flag and send another drain message. */
    void drainAgain() {
        drainScheduled.set(true);
        wakeup.run();
    }

    /** @return the next submitted request, or null */
    Request poll() {
        Request r = submissions.poll();
        if (r != null) {
            polled++;
        }
        return r;
    }

    /** @return the lane table as last published by the actor */
    public List<LaneInfo> lanes() {
        return lanes;
    }

    void publishLanes(List<LaneInfo> snapshot) {
        this.lanes = snapshot;
    }

    /** @return whether the user closed (or is closing) the endpoint */
    public boolean isClosing() {
        return closing;
    }

    /** Marks the endpoint closing: new operations are refused at the facade. */
    public void markClosing() {
        closing = true;
    }

    /** @return the failure that ended the endpoint, or null */
    public FencelineException failure() {
        return failure;
    }

    void publishFailure(FencelineException e) {
        this.failure = e;
    }
}
