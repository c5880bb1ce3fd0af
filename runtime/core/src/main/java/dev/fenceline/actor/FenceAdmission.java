package dev.fenceline.actor;

import dev.fenceline.actor.EndpointCounters.Counter;
import dev.fenceline.internal.FenceDecision;
import dev.fenceline.internal.FenceMode;
import dev.fenceline.internal.FenceQueue;
import dev.fenceline.internal.FenceState;
import dev.fenceline.internal.LaneTable;
import java.util.List;
import org.slf4j.Logger;

/**
 * Fence admission for one endpoint (docs/fences.md): the fence record, the fence queue, and the strong
 * fence's life from its start to its completion, failure or restart after a reconfiguration. The
 * arithmetic is {@link FenceState}'s; this class applies its decisions. Owned by the endpoint actor.
 */
final class FenceAdmission {
    /** Where the endpoint's one strong fence is. */
    sealed interface StrongFence {
    }

    /** No strong fence in flight. */
    record Idle() implements StrongFence {
        static final Idle INSTANCE = new Idle();
    }

    /**
     * Its lane flushes are out.
     *
     * @param target the epoch it was started for
     * @param awaiting lane flushes not yet answered
     */
    record Flushing(long target, int awaiting) implements StrongFence {
    }

    /**
     * A reconfiguration dropped some of its lane flushes: it is re-issued over every live lane after
     * the replay, behind the restarted data.
     *
     * @param target the epoch it was started for
     */
    record Interrupted(long target) implements StrongFence {
    }

    /** What the endpoint does with a request that {@link #admit} looked at. */
    enum Verdict {
        /** Post it now. */
        POST,
        /** It waits in the fence queue. */
        QUEUED
    }

    private final FenceMode mode;
    private final LaneSlots slots;
    private final FlushTracker flushes;
    private final EndpointCounters counters;
    private final Logger log;
    private final String name;
    private final Runnable tellFenceDone;
    private final Runnable tellDrain;
    private FenceState fence = FenceState.initial();
    private final FenceQueue<Request> queue = new FenceQueue<>(Request::epoch);
    private boolean drainScheduled;
    private StrongFence strong = Idle.INSTANCE;
    private final java.util.function.LongSupplier clock;
    private final LatencyRecorder latency;
    private LaneEvents events;
    /** When the strong fence in flight started, for its latency. */
    private long startedAt;
    /** Requests that wait for a given-up connection's answer: work fenced after them waits too. */
    private InflightTable holds;

    /**
     * @param mode the endpoint's fence mode
     * @param slots the lanes
     * @param flushes where the strong fence's lane flushes go
     * @param counters the endpoint's counters
     * @param log the endpoint's log
     * @param name the endpoint's name, for the log
     * @param tellFenceDone sends the endpoint {@code StrongFenceDone}
     * @param tellDrain sends the endpoint {@code DrainFenceQueue}
     * @param clock the time
     * @param latency where each strong fence's time from start to completion goes
     */
    FenceAdmission(FenceMode mode, LaneSlots slots, FlushTracker flushes, EndpointCounters counters, Logger log,
            String name, Runnable tellFenceDone, Runnable tellDrain, java.util.function.LongSupplier clock,
            LatencyRecorder latency) {
        this.mode = mode;
        this.slots = slots;
        this.flushes = flushes;
        this.counters = counters;
        this.log = log;
        this.name = name;
        this.tellFenceDone = tellFenceDone;
        this.tellDrain = tellDrain;
        this.clock = clock;
        this.latency = latency;
    }

    /**
     * The fence decision at a request's first progress, and again when a restart re-selects its
     * lane. During a replay a strong fence never starts: the request waits in the queue and the
     * drain after the replay decides again.
     *
     * @param r a fenced request whose lane is live
     * @param fromQueueHead whether it was just taken from the head of the queue
     * @param replaying whether a reconfiguration's replay is under way
     * @return whether to post it now
     */
    Verdict admit(Request r, boolean fromQueueHead, boolean replaying) {
        if (holds != null && holds.holding() && holds.heldBefore(r.epoch)) {
            // A copy fenced before it is still on a given-up connection, which will answer it: if that
            // copy is applied late, this must not have been applied before it.
            enqueue(r, fromQueueHead);
            return Verdict.QUEUED;
        }
        if (r.kind != Request.Kind.GET && holds != null && holds.readOpenBefore(r.epoch)) {
            enqueue(r, fromQueueHead); // a get fenced before it is unanswered: its answer first
            return Verdict.QUEUED;
        }
        if (!fromQueueHead && !queue.isEmpty() && r.epoch > queue.peek().epoch) {
            // Work fenced before it still waits in the queue (a request restarted into it below a
            // fence that then completed): posted now, this would overtake it. The queue is in epoch
            // order, so its head is the earliest.
            enqueue(r, false);
            scheduleDrain();
            return Verdict.QUEUED;
        }
        long lanes = 1L << r.lane;
        // The hot path: nothing to decide, nothing to allocate. Never past a request that waits in
        // the queue: the drain that releases it may still be in the mailbox.
        if ((fromQueueHead || queue.isEmpty()) && fence.admitsUnchanged(r.epoch, lanes)) {
            return Verdict.POST;
        }
        FenceDecision d = fence.decide(mode, r.epoch, lanes, slots.table().liveMask(),
                !fromQueueHead && !queue.isEmpty());
        if (log.isTraceEnabled()) {
            log.trace("endpoint {}: {} lane {} from {} -> {}", name, r, r.lane, fence, d);
        }
        if (d instanceof FenceDecision.Admit a) {
            fence = d.next();
            if (a.why() == FenceDecision.Why.FAST_FORWARD) {
                counters.increment(Counter.FAST_FORWARDS);
            }
            return Verdict.POST;
        }
        if (d instanceof FenceDecision.WeakFence w) {
            fence = d.next();
            counters.increment(Counter.WEAK_FENCES);
            slots.table().connection(w.lane()).fence();
            return Verdict.POST;
        }
        if (d instanceof FenceDecision.StartStrongFence s && !replaying) {
            fence = d.next();
            counters.increment(Counter.STRONG_FENCES);
            startedAt = clock.getAsLong();
            log.debug("endpoint {}: strong fence to epoch {} over lanes {}", name, fence.inFlightEpoch(),
                    LaneTable.describeMask(s.lanes()));
            issue(fence.inFlightEpoch(), s.lanes());
        }
        enqueue(r, fromQueueHead);
        return Verdict.QUEUED;
    }

    private void enqueue(Request r, boolean fromQueueHead) {
        if (fromQueueHead) {
            queue.pushFront(r);
        } else {
            queue.add(r);
            counters.increment(Counter.FENCE_QUEUED);
            counters.max(Counter.MAX_FENCE_QUEUE_DEPTH, queue.size());
        }
    }

    /**
     * @param inflight where requests that wait for a given-up connection's answer are kept, and
     *     the gets not answered yet
     */
    void holds(InflightTable inflight) {
        this.holds = inflight;
        inflight.onReadsAnswered(this::scheduleDrain);
    }

    /** A given-up connection answered a held copy: what waited behind it may go. */
    void heldResolved() {
        scheduleDrain();
    }

    private void issue(long target, long lanes) {
        int n = flushes.issueAll(FlushTracker.FenceFlush.INSTANCE, lanes);
        strong = new Flushing(target, n);
        if (n == 0) {
            // Never complete a fence synchronously inside the decision: resume through the mailbox.
            tellFenceDone.run();
        }
    }

    /** @param e where completed strong fences are reported (JFR) */
    void events(LaneEvents e) {
        this.events = e;
    }

    /** One of the strong fence's lane flushes answered. */
    void laneFlushed() {
        if (strong instanceof Flushing f) {
            strong = new Flushing(f.target(), f.awaiting() - 1);
            if (f.awaiting() == 1) {
                completeIfDone();
            }
        }
    }

    /** The strong fence completes if every lane flush it waits for answered: the queue may drain. */
    void completeIfDone() {
        if (strong instanceof Flushing f && f.awaiting() <= 0 && fence.fenceInFlight()) {
            strong = Idle.INSTANCE;
            long took = clock.getAsLong() - startedAt;
            latency.record(took);
            if (events != null) {
                events.strongFence(fence.inFlightEpoch(), took);
            }
            fence = fence.strongFenceCompleted();
            scheduleDrain();
        }
    }

    /**
     * The in-flight strong fence failed: the epoch stays, the record stays (dirty), and every
     * request waiting behind the fence is handed back to fail with the fence's error. The drain flag
     * stays as it is, so there is never more than one scheduled drain.
     *
     * @param error why, for the log
     * @return the requests that waited, in order
     */
    List<Request> fail(Throwable error) {
        log.debug("endpoint {}: strong fence to epoch {} failed: {}", name, fence.inFlightEpoch(), error.getMessage());
        flushes.dropAll(FlushTracker.FenceFlush.INSTANCE);
        strong = Idle.INSTANCE;
        fence = fence.strongFenceFailed();
        return queue.removeAll();
    }

    /**
     * Lane slots changed (docs/fences.md, lane identity): the record learns which, and a strong fence that lost lane
     * flushes waits to be re-issued after the replay.
     *
     * @param changed the changed slots
     * @param had for each changed slot, whether it held a connection before
     * @param fenceFlushesLost how many of the strong fence's lane flushes were dropped
     */
    void slotsChanged(long changed, long had, int fenceFlushesLost) {
        for (int i = 0; i < Long.SIZE; i++) {
            if ((changed & (1L << i)) != 0) {
                fence = fence.slotChanged(i, (had & (1L << i)) != 0);
            }
        }
        if (fenceFlushesLost > 0 && strong instanceof Flushing f) {
            strong = new Interrupted(f.target());
        }
    }

    /**
     * After a replay: an interrupted strong fence goes out again over every live lane, behind the
     * restarted data, and the queue drains.
     */
    void replayDone() {
        if (strong instanceof Interrupted i && fence.fenceInFlight()) {
            long live = slots.table().liveMask();
            fence = fence.strongFenceRestarted(live, i.target());
            flushes.dropAll(FlushTracker.FenceFlush.INSTANCE);
            log.debug("endpoint {}: strong fence to epoch {} restarted over lanes {}", name, fence.inFlightEpoch(),
                    LaneTable.describeMask(live));
            issue(i.target(), live);
        }
        scheduleDrain();
    }

    private void scheduleDrain() {
        if (!drainScheduled && !queue.isEmpty()) {
            drainScheduled = true;
            tellDrain.run();
        }
    }

    /** The scheduled drain arrived; a later one may be scheduled. */
    void drainArrived() {
        drainScheduled = false;
    }

    /** @return the next request to release from the queue, or null (empty, or a strong fence flies) */
    Request release() {
        return fence.fenceInFlight() ? null : queue.poll();
    }

    /** @return whether nothing waits in the queue and no strong fence is in flight */
    boolean settled() {
        return queue.isEmpty() && !fence.fenceInFlight();
    }

    /**
     * @param seq a place in the endpoint's order
     * @return whether a queued request comes before it
     */
    boolean queuedBefore(long seq) {
        return queue.any(q -> q.seq < seq);
    }

    /** @return the requests in the queue, removed (the endpoint ended) */
    List<Request> clear() {
        return queue.removeAll();
    }

    @Override
    public String toString() {
        return fence + ", " + strong;
    }
}
