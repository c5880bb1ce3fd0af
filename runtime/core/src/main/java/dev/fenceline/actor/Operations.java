package dev.fenceline.actor;

import dev.fenceline.EndpointFailedException;
import dev.fenceline.FencelineException;
import dev.fenceline.OutcomeUnknownException;
import dev.fenceline.actor.EndpointCounters.Counter;
import dev.fenceline.actor.LaneProtocol.LaneFlushed;
import dev.fenceline.actor.LaneProtocol.OpCompleted;
import dev.fenceline.actor.LaneProtocol.OpFailed;
import dev.fenceline.actor.LaneProtocol.OpsCompleted;
import dev.fenceline.internal.ErrorMode;
import dev.fenceline.internal.FencelineSettings;
import dev.fenceline.internal.Keepalive;
import java.util.List;
import org.slf4j.Logger;

/**
 * The life of an endpoint's requests from acceptance to completion: lane selection, fence
 * admission, posting, completions, flushes, and restarts after a reconfiguration. It ties the
 * endpoint's parts together ({@link LaneSlots}, {@link InflightTable}, {@link RequestPoster},
 * {@link FlushTracker}, {@link FenceAdmission}, {@link GrantPolicy}); the endpoint actor routes
 * messages here. Owned by that actor; no other thread touches it.
 */
final class Operations implements LaneSlots.Answers, RequestPoster.Outcomes {
    private final FencelineSettings settings;
    private final EndpointChannel channel;
    private final EndpointCounters counters;
    private final Logger log;
    final LaneSlots slots;
    final InflightTable inflight;
    /** What the connections this endpoint gave up said of their copies. */
    final Revocations revocations = new Revocations();
    /**
     * Set when a restart found a copy that may still apply and no lane that would recognize it
     * again: the endpoint must end, so that nothing fenced after that copy goes ahead of it.
     */
    private EndpointFailedException unordered;
    final FlushTracker flushes;
    final FenceAdmission fences;
    private final GrantPolicy grants;
    private final Keepalive keepalive;
    /** Between a reconfiguration and the end of its replay: no flush and no strong fence starts. */
    private boolean replaying;
    /** Built once: progressFlushes runs after every completion. */
    private final java.util.function.LongPredicate queuedBefore;
    private final RequestPoster poster;

    /**
     * @param settings the runtime settings
     * @param channel the endpoint's channel
     * @param log the endpoint's log
     * @param keepalive the endpoint's keepalive, told of answered probes
     * @param clock the time, for the latencies it records
     * @param tellFenceDone sends the endpoint {@code StrongFenceDone}
     * @param tellDrain sends the endpoint {@code DrainFenceQueue}
     */
    Operations(FencelineSettings settings, EndpointChannel channel, Logger log, Keepalive keepalive,
            java.util.function.LongSupplier clock, Runnable tellFenceDone, Runnable tellDrain) {
        this.settings = settings;
        this.channel = channel;
        this.counters = channel.counters();
        this.log = log;
        this.keepalive = keepalive;
        this.slots = new LaneSlots(this, channel.laneCounters());
        this.inflight = new InflightTable(channel.direct());
        this.flushes = new FlushTracker(slots, inflight, channel, counters, clock);
        this.fences = new FenceAdmission(settings.fenceMode(), slots, flushes, counters, log, channel.name(),
                tellFenceDone, tellDrain, clock, channel.fenceLatency());
        this.fences.events(channel.events());
        this.fences.holds(inflight);
        this.grants = new GrantPolicy(slots, channel, settings.errorMode() == ErrorMode.FAILOVER);
        this.queuedBefore = fences::queuedBefore;
        this.poster = new RequestPoster(settings, channel, slots, inflight, this);
    }

    /** @return the grant policy (keepalive reads which lane carries direct active messages) */
    GrantPolicy grants() {
        return grants;
    }

    /** Publishes the fast path's grant if nothing of the endpoint is outstanding, else revokes it. */
    void updateGrant() {
        boolean idle = idle();
        grants.update(idle);
        if (!idle) {
            channel.keepaliveNow(); // work waits for a lane: keepalive's short interval, every round
        }
    }

    private boolean idle() {
        return inflight.isEmpty() && fences.settled() && !flushes.hasUserFlushes() && !replaying;
    }

    /**
     * @return whether nothing the endpoint accepted waits for a lane: no operation, fence or flush of
     *     the actor's, no direct operation unanswered (keepalive then probes at its idle interval)
     */
    boolean quiet() {
        return idle() && channel.direct().settled();
    }

    /**
     * After a keepalive tick that failed nothing, or a probe's answer: a quiet endpoint tells the
     * worker when its next tick is due (work that comes to wait sooner brings the ticks back:
     * {@link EndpointChannel#keepaliveNow()}); one with work waiting is ticked every round.
     */
    void scheduleKeepalive() {
        if (!quiet()) {
            channel.keepaliveDue(0);
            return;
        }
        channel.keepaliveDue(keepalive.nextQuietDue(slots.table().probedMask()));
        // A calling thread may have posted meanwhile: it counts its operation sent, then lowers the due
        // time if it sees one; this writes the due time, then looks for such work. One of the two sees
        // the other's write (all volatile), so a posted operation never waits for a quiet tick.
        if (!quiet()) {
            channel.keepaliveDue(0);
        }
    }

    // ---------------------------------------------------------------- acceptance and posting

    /**
     * Fails everything submitted so far (the endpoint takes no more).
     *
     * @param error makes each request's error
     */
    void reject(java.util.function.Supplier<? extends FencelineException> error) {
        channel.submissions().drainStarted();
        Request r;
        while ((r = channel.submissions().poll()) != null) {
            if (r.kind != Request.Kind.FLUSH) { // a flush is no operation (accept counts none either)
                counters.increment(Counter.OPERATIONS);
                counters.increment(Counter.FAILED);
            }
            r.fail(r.kind == Request.Kind.FLUSH ? flushError(r, error.get()) : error.get());
        }
    }

    /**
     * @param flush a flush the endpoint's end fails
     * @param end the end
     * @return what it reports: an implicit operation before it that may have been applied, if one
     *     failed so, else the end (which would say that none was applied)
     */
    private FencelineException flushError(Request flush, FencelineException end) {
        return channel.implicit().endOfFlush(flush.submissionNumber, end);
    }

    /** @param r a request just taken from the submission queue */
    void accept(Request r) {
        inflight.order(r);
        if (r.kind == Request.Kind.FLUSH) {
            flushes.add(r);
            progressFlushes();
            return;
        }
        counters.increment(Counter.OPERATIONS);
        int lane = slots.pick(r, r.opClass(settings));
        if (lane < 0) {
            counters.increment(Counter.FAILED);
            r.fail(noLane(r, "(" + r.opClass(settings) + ")"));
            return;
        }
        r.lane = lane;
        inflight.admit(r);
        if (!r.kind.fenced()) {
            post(r);
            return;
        }
        admitOrQueue(r, false);
    }

    /** @return whether the request was posted or completed (false: it waits in the fence queue) */
    private boolean admitOrQueue(Request r, boolean fromQueueHead) {
        int lane = r.lane;
        if (!slots.table().isLive(lane)) {
            // Selected before a reconfiguration took its lane: select again (the epoch stays).
            lane = slots.pick(r, r.opClass(settings));
        }
        if (fromQueueHead && r.restarts > 0 && (r.mayHaveApplied || r.stillApplyScope != null)) {
            // Judged when it was restarted into the queue, against a lane that may have been
            // replaced since: judged again against the one it goes out on now.
            if (refused(r, lane, r.resend, false)) {
                return true;
            }
        } else if (lane < 0) {
            refuse(r, noLane(r, "any more"));
            return true;
        }
        r.lane = lane;
        if (fences.admit(r, fromQueueHead, replaying) == FenceAdmission.Verdict.POST) {
            post(r);
            return true;
        }
        return false;
    }

    private EndpointFailedException noLane(Request r, String when) {
        return new EndpointFailedException("endpoint " + channel.name() + " has no live lane for " + r.kind + " "
                + when + "; lanes: " + slots.table().describe());
    }

    /** Posts a request's fragments (after a restart, just those it names) on its lane. */
    private void post(Request r) {
        poster.post(r);
    }

    // ---------------------------------------------------------------- answers and completion

    /** @param m what a lane answered (the endpoint heard from the lane already) */
    void answer(LaneProtocol.Answer m) {
        if (m instanceof OpCompleted c) {
            completed(c.token(), c.value());
        } else if (m instanceof OpsCompleted c) {
            for (int i = 0; i < c.tokens().length; i++) {
                completed(c.tokens()[i], c.values()[i]);
            }
        } else if (m instanceof OpFailed f) {
            failed(f.token(), f.error());
        } else if (m instanceof LaneFlushed f) {
            flushed(f.token());
        }
        updateGrant();
    }

    @Override
    public void completed(long token, long value) {
        boolean wasHeld = inflight.isHeld(token);
        InflightTable.Fragment f = inflight.take(token);
        if (f != null) {
            Request r = f.request();
            r.partlyApplied |= r.kind == Request.Kind.PUT && r.fragmentCount > 1;
            fragmentDone(r, value);
        }
        if (wasHeld) {
            fences.heldResolved();
        }
    }

    @Override
    public void failed(long token, FencelineException e) {
        boolean wasHeld = inflight.isHeld(token);
        InflightTable.Fragment f = inflight.take(token);
        if (wasHeld) {
            fences.heldResolved();
        }
        if (f == null) {
            return;
        }
        Request r = f.request();
        log.debug("endpoint {}: {} failed: {}", channel.name(), r, e.getMessage());
        if (r.mayHaveApplied && !java.util.Objects.equals(r.riskScope, f.scope())
                || r.stillApplyScope != null && !r.stillApplyScope.equals(f.scope())) {
            // A refusal speaks for the copies its target's exactly-once window saw: not for one on a
            // given-up connection of another window, which may have been applied, or may still be.
            e = r.truthful(e);
        }
        if (r.error == null || e instanceof OutcomeUnknownException && !(r.error instanceof OutcomeUnknownException)) {
            r.error = e; // the first error, unless a later fragment's outcome is unknown: then so is the request's
        }
        fragmentDone(r, 0);
    }

    /**
     * A request completes only when every fragment is accounted for: its buffer may still be in use
     * by a fragment in flight, so failing it early would hand the buffer back too soon.
     */
    private void fragmentDone(Request r, long value) {
        if (--r.fragmentsOutstanding == 0) {
            complete(r, value, r.error);
        }
    }

    /** Completes a request whose fragments are all back: bookkeeping and grant first, completion last. */
    @Override
    public void complete(Request r, long value, FencelineException error) {
        retire(r);
        counters.increment(error == null ? Counter.COMPLETED : Counter.FAILED);
        // The grant before the completion, so a thread that waited finds the fast path open; while
        // this request completes, a fast-path flush goes to the actor instead (it must not pass it).
        channel.grant().completing(true);
        updateGrant();
        if (error == null) {
            r.succeed(value); // the user's callbacks run here (a future keeps their exceptions)
        } else {
            r.fail(r.partlyApplied ? r.truthful(error) : error); // else a refusal here is the target's word
        }
        TakenBack.completed(r);
        channel.grant().completing(false);
        progressFlushes();
    }

    /** Fails a request that cannot go (or go on) at all; the caller goes on with its own work. */
    @Override
    public void refuse(Request r, FencelineException e) {
        retire(r);
        counters.increment(Counter.FAILED);
        r.fail(r.truthful(e));
        TakenBack.completed(r);
    }

    /** Bookkeeping before completion: unlink the request and release the flushes that waited for it. */
    private void retire(Request r) {
        inflight.retire(r);
        flushes.retired(r.seq);
    }

    /**
     * Takes back what calling threads posted on a lane that ended before answering (see
     * {@link TakenBack}); called as a reconfiguration starts and as the endpoint ends.
     */
    void adoptReturned() {
        int n = TakenBack.takeBack(channel.direct(), inflight, counters);
        if (n > 0) {
            log.debug("endpoint {}: took back {} operations posted on a lane that ended", channel.name(), n);
        }
    }

    // ---------------------------------------------------------------- flushes and fences

    /** Starts and completes what flushes can; nothing starts during a replay. */
    void progressFlushes() {
        if (!replaying) {
            flushes.progress(queuedBefore);
        }
    }

    @Override
    public void flushed(long token) {
        FlushTracker.Token t = flushes.take(token);
        if (t == null) {
            return; // dropped by a reconfiguration or a failed fence
        }
        if (t.owner() instanceof FlushTracker.FenceFlush) {
            fences.laneFlushed();
        } else if (t.owner() instanceof FlushTracker.Probe) {
            if (slots.current(t.lane(), t.connectionId())) {
                keepalive.probeAnswered(t.lane());
                scheduleKeepalive(); // its deadline needs no tick now
            }
        } else if (t.owner() instanceof FlushTracker.UserFlush f) {
            flushes.answered(f);
            progressFlushes();
        }
    }

    /**
     * A lane flush failed. In failover mode a lane that cannot flush is a failed lane (restarting on
     * the others re-issues the flush over every live lane, and the user sees nothing); so is a lane
     * whose probe failed.
     *
     * @param token the lane flush's token
     * @param error why
     * @return the flush's record if its lane must now be failed, else null
     */
    FlushTracker.Token flushFailed(long token, FencelineException error) {
        FlushTracker.Token t = flushes.peek(token);
        if (t == null) {
            return null;
        }
        if (settings.errorMode() == ErrorMode.FAILOVER && slots.current(t.lane(), t.connectionId())
                && Long.bitCount(slots.table().liveMask()) > 1) {
            return t;
        }
        flushes.take(token);
        if (t.owner() instanceof FlushTracker.FenceFlush) {
            // Each as any refused request: truthfully (a restarted one may have been applied by its
            // lost lane), and a taken-back one accounted, so that the posting count settles.
            fences.fail(error).forEach(r -> refuse(r, error));
            progressFlushes();
        } else if (t.owner() instanceof FlushTracker.Probe) {
            return t;
        } else if (t.owner() instanceof FlushTracker.UserFlush f) {
            flushes.fail(f, error);
            progressFlushes();
        }
        return null;
    }

    /** The scheduled fence-queue drain: releases requests in epoch order until one has to wait. */
    void drainFenceQueue() {
        fences.drainArrived();
        if (replaying) {
            return; // the end of the replay schedules the drain again
        }
        Request r;
        while (unordered == null && (r = fences.release()) != null && admitOrQueue(r, true)) {
            // released; but once a request is found whose copy may apply late, nothing fenced after
            // it goes out: the endpoint ends (the actor takes the verdict after this drain)
        }
        if (unordered != null) {
            return; // no grant either: the end revokes it
        }
        progressFlushes();
        updateGrant();
    }

    /**
     * A lane has room again: what waits there goes out.
     *
     * @param lane the slot
     * @param connectionId the connection that has room (a stale one changes nothing)
     */
    void laneReady(int lane, long connectionId) {
        if (!slots.current(lane, connectionId)) {
            return;
        }
        try {
            slots.ready(lane);
        } finally {
            updateGrant();
        }
    }

    // ---------------------------------------------------------------- replay

    /** A reconfiguration's replay starts: nothing may act on the old lane table. */
    void replayStarted() {
        channel.grant().revoke();
        replaying = true;
    }

    /**
     * Restarts one request on the current lanes, keeping its epoch and sequence numbers; through
     * the fence decision again, unless it may have been applied on a lane without deduplication.
     *
     * @param x what the replay planner said to restart
     */
    void restart(ReplayPlanner.Restart x) {
        Request r = x.request();
        r.copyGivenUp(x.mayHaveApplied(), x.mayStillApply(), x.scope());
        if (unordered != null) {
            return; // the endpoint ends with this change: nothing more goes out; it fails with the rest
        }
        int lane = slots.pick(r, r.opClass(settings));
        if (refused(r, lane, x.fragments(), x.overtaken())) {
            return;
        }
        counters.increment(Counter.RESTARTS);
        r.restarts++;
        r.lane = lane;
        r.resend = x.fragments();
        r.posted = false;
        if (log.isDebugEnabled()) {
            log.debug("endpoint {}: restarting {} ({} fragments) on lane {}", channel.name(), r, r.resend.length,
                    lane);
        }
        if (r.kind.fenced()) {
            admitOrQueue(r, false);
        } else {
            post(r); // active messages are ordered per lane, never fenced
        }
    }

    /**
     * Refuses a restarted request that may not go out on {@code lane} ({@link ReplayPlanner#judge}).
     *
     * @param r a request with copies on given-up connections
     * @param lane the lane it would go out on now, or -1
     * @param fragments its fragments to send again
     * @param overtaken whether its first read may have been overtaken
     * @return whether it was refused (completed); false if it may go out
     */
    private boolean refused(Request r, int lane, int[] fragments, boolean overtaken) {
        Object scope = lane < 0 ? null : slots.table().connection(lane).exactlyOnceScope();
        ReplayPlanner.Verdict verdict = ReplayPlanner.judge(r, lane, scope, fragments, overtaken);
        if (verdict == ReplayPlanner.Verdict.RESTART) {
            return false;
        }
        refuse(r, verdict == ReplayPlanner.Verdict.NO_LANE ? noLane(r, "after a reconfiguration")
                : ReplayPlanner.refusal(verdict, r, overtaken));
        if (verdict == ReplayPlanner.Verdict.UNORDERED && unordered == null) {
            unordered = ReplayPlanner.unordered(channel.name());
        }
        return true;
    }

    /**
     * @return the endpoint's end if a restart found a copy that may be applied late and cannot be
     *     recognized again, else null (taken: it is reported once)
     */
    EndpointFailedException takeUnordered() {
        EndpointFailedException e = unordered;
        unordered = null;
        return e;
    }

    /** The replay is over: an interrupted fence and lost lane flushes go out again, after the restarted data. */
    void replayDone() {
        replaying = false;
        fences.replayDone();
        flushes.reissueLost();
        progressFlushes();
        updateGrant();
    }

    // ---------------------------------------------------------------- the end

    /**
     * Completes every request the endpoint holds: with {@code e} where no copy of it was applied or
     * can still be, else with an {@link OutcomeUnknownException} whose cause is {@code e}.
     * Bookkeeping first, completion last. The connections were asked what became of their copies
     * ({@link #revocations}) before this.
     *
     * @param e the endpoint's end (its failure, or its close)
     */
    void failEverything(FencelineException e) {
        adoptReturned(); // posted on a lane that ended with the endpoint: their outcome is reported here too
        inflight.markMaybeApplied(slots.parkedTokens(), revocations);
        fences.clear();
        List<Request> victims = inflight.clear();
        List<Request> flushVictims = flushes.clear();
        slots.clearParked();
        for (Request r : victims) {
            if (!r.done) {
                counters.increment(Counter.FAILED);
                r.fail(r.truthful(e));
            }
        }
        for (Request f : flushVictims) {
            f.fail(flushError(f, e)); // the implicit operations before it failed above, or earlier
        }
        channel.direct().fail(e);
    }
}
