package dev.fenceline.actor;

import dev.fenceline.FencelineException;
import dev.fenceline.LaneInfo;
import dev.fenceline.WorkerAddress;
import dev.fenceline.spi.RequestTrace;
import dev.fenceline.spi.support.Tracing;
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

    /**
     * What a flush reports: the first failed implicit operation submitted before it, else the first
     * failed direct active message sent before it (each consumed: one flush reports one).
     *
     * @param before the flush's submission number (exclusive bound)
     * @param directTarget the direct messages sent before it
     * @return the error, or null
     */
    FencelineException flushError(long before, long directTarget) {
        FencelineException implicit = takeImplicitError(before);
        FencelineException direct = takeDirectError(directTarget);
        return implicit != null ? implicit : direct;
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
    record Grant(dev.fenceline.spi.DirectAccess lane, long stamp, boolean activeMessages) {
    }

    /** @return the grant if it is still valid, else null */
    Grant validGrant() {
        Grant g = grant;
        return g != null && g.stamp() == submitted.get() ? g : null;
    }

    /** Actor: publishes a grant if every submission so far has been taken (and, by the caller, completed). */
    void publishGrant(dev.fenceline.spi.DirectAccess lane, boolean activeMessages) {
        long n = submitted.get();
        grant = n == polled ? new Grant(lane, n, activeMessages) : null;
    }

    void revokeGrant() {
        grant = null;
    }

    /** A direct active message was queued (counted by the lane, through directAnswers.queued). */
    void fastMessage() {
        RequestTrace t = Tracing.take();
        if (t != null) {
            t.admitted(RequestTrace.DIRECT, -1, false, false);
        }
    }

    // Active messages sent on the fast path are answered later, on a transport's polling thread.
    // Two monotonic counts, never decremented (a count taken back could strand a flush that had
    // already read it). The lane numbers each message when it is sure to be queued, and reports the
    // answers of one lane in that order; the actor moves the grant to another lane only once every
    // answer is in. So "answered >= n" means exactly "the first n messages were answered", and a
    // flush that started when n had been sent completes once it holds. A message's failure is kept
    // under its number: the flush that waited for it reports it.
    private final java.util.concurrent.atomic.AtomicLong directSent = new java.util.concurrent.atomic.AtomicLong();
    private final java.util.concurrent.atomic.AtomicLong directAnswered =
            new java.util.concurrent.atomic.AtomicLong();
    /** Answers that came from a peer (not abandoned): for keepalive, proof that the lane is alive. */
    private final java.util.concurrent.atomic.AtomicLong directHeard = new java.util.concurrent.atomic.AtomicLong();
    /** Guarded by itself: failures by message number, taken by flushes in the order of their targets. */
    private final java.util.TreeMap<Long, FencelineException> directErrors = new java.util.TreeMap<>();
    private final java.util.concurrent.atomic.LongAdder directFailures = new java.util.concurrent.atomic.LongAdder();
    /** The answered count a waiting flush needs: the answer that reaches it wakes the actor. */
    private volatile long directWanted = Long.MAX_VALUE;

    /** Where lanes report the answers to this endpoint's direct active messages. */
    final dev.fenceline.spi.DirectAnswers directAnswers = new dev.fenceline.spi.DirectAnswers() {
        @Override
        public long queued() {
            return directSent.getAndIncrement();
        }

        @Override
        public void answered(long index, FencelineException error) {
            if (error != null) { // before the count: the flush it releases must see it
                directFailures.increment();
                synchronized (directErrors) {
                    directErrors.putIfAbsent(index, error);
                }
            }
            directHeard.incrementAndGet();
            settled(directAnswered.incrementAndGet());
        }

        @Override
        public void abandoned(int count, FencelineException error) {
            directFailures.add(count);
            // Sent after every flush that has completed: the next flush to complete reports it.
            implicitFailed(error, 0);
            settled(directAnswered.addAndGet(count));
        }
    };

    private void settled(long answered) {
        if (!directFlushes.isEmpty()) {
            releaseDirectFlushes(answered);
        }
        if (answered >= directWanted) {
            directWanted = Long.MAX_VALUE;
            wakeup.run();
        }
    }

    /** @return whether every direct active message sent so far was answered */
    boolean directSettled() {
        long sent = directSent.get(); // first: answers counted after this read cover at least these
        return directAnswered.get() >= sent;
    }

    /** @return direct active messages answered by their peer so far (keepalive's evidence) */
    long directHeard() {
        return directHeard.get();
    }

    /** @return direct active messages sent so far: what a flush started now waits for */
    long directSent() {
        return directSent.get();
    }

    /** @return direct active messages answered or given up so far */
    long directAnswered() {
        return directAnswered.get();
    }

    /** @return direct active messages whose handler failed or whose lane died first */
    long directFailures() {
        return directFailures.sum();
    }

    /**
     * @param target a flush's count of direct messages sent before it (exclusive bound)
     * @return the first failure among them, or null; the failures before it are consumed
     */
    FencelineException takeDirectError(long target) {
        synchronized (directErrors) {
            java.util.Map.Entry<Long, FencelineException> first = directErrors.firstEntry();
            if (first == null || first.getKey() >= target) {
                return null;
            }
            directErrors.headMap(target).clear();
            return first.getValue();
        }
    }

    /**
     * Actor: a flush needs {@code target} answers.
     *
     * @return true if they are in; otherwise the answer that brings them wakes the actor
     */
    boolean directAnsweredOrWake(long target) {
        if (directAnswered.get() >= target) {
            return true;
        }
        // The smallest wish wins (flushes are checked in order); every reset to MAX comes with a
        // wake-up, after which the actor wishes again.
        directWanted = Math.min(directWanted, target);
        // Re-read after publishing the wish: an answer counted in between saw the old wish.
        return directAnswered.get() >= target;
    }

    /** A flush under a grant that waits only for answers to direct active messages. */
    private record DirectFlush(long target, long before, java.util.concurrent.CompletableFuture<Void> done) {
    }

    private final ConcurrentLinkedQueue<DirectFlush> directFlushes = new ConcurrentLinkedQueue<>();

    /**
     * A flush issued under a valid grant while direct active messages are unanswered: completed by
     * the answer that brings the count to what was sent before it, on that answer's thread.
     *
     * @param target the direct messages sent before it, read before the flush was issued
     * @param before the flush's submission number (implicit errors before it are its own)
     * @return completes when the handler ran for each of them
     */
    java.util.concurrent.CompletableFuture<Void> directFlush(long target, long before) {
        java.util.concurrent.CompletableFuture<Void> done = new java.util.concurrent.CompletableFuture<>();
        directFlushes.add(new DirectFlush(target, before, done));
        releaseDirectFlushes(directAnswered.get()); // the last answer may have come before the add
        FencelineException t = terminal;
        if (t != null) {
            failDirectFlushes(t); // the actor may have failed the waiting ones just before the add
        }
        return done;
    }

    private void releaseDirectFlushes(long answered) {
        java.util.List<DirectFlush> ready = null;
        // One thread at a time, smallest target first: each flush takes the failures of the
        // messages it waited for, and a later one cannot take them first.
        synchronized (directErrors) {
            for (DirectFlush d : directFlushes) {
                if (d.target() <= answered && directFlushes.remove(d)) {
                    if (ready == null) {
                        ready = new java.util.ArrayList<>(2);
                    }
                    ready.add(d);
                }
            }
            if (ready == null) {
                return;
            }
            ready.sort(java.util.Comparator.comparingLong(DirectFlush::target));
            for (DirectFlush d : ready) {
                FencelineException e = flushError(d.before(), d.target());
                if (e == null) {
                    d.done().complete(null); // dependents go to the dispatcher (EndpointImpl)
                } else {
                    d.done().completeExceptionally(e);
                }
            }
        }
    }

    /**
     * The endpoint ended (failed or closed): the flushes waiting for direct answers fail with it.
     *
     * @param e the endpoint's end
     */
    void failDirectFlushes(FencelineException e) {
        for (DirectFlush d : directFlushes) {
            if (directFlushes.remove(d)) {
                d.done().completeExceptionally(e);
            }
        }
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
        failDirectFlushes(terminal);
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
