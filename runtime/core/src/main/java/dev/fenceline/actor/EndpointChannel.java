package dev.fenceline.actor;

import dev.fenceline.FencelineException;
import dev.fenceline.LaneInfo;
import dev.fenceline.WorkerAddress;
import dev.fenceline.internal.LaneTable;
import java.security.SecureRandom;
import java.util.List;

/**
 * What an endpoint's facade and its actor share: the {@link SubmissionQueue} (the batching front of
 * the actor's mailbox), the {@link GrantSlot} of the fast path, the {@link DirectLedger} of direct
 * active messages, the {@link ImplicitErrors} that flushes report, the {@link FastPathCounters},
 * and what the actor publishes for other threads (lanes, closing, failure). Only the actor
 * consumes the queue and writes the published fields.
 */
public final class EndpointChannel {
    private static final SecureRandom IDS = new SecureRandom();

    private final String name;
    private final WorkerAddress peer;
    private final long endpointId = IDS.nextLong();
    private final EndpointCounters counters;
    private final ImplicitErrors implicit = new ImplicitErrors();
    private final SubmissionQueue submissions = new SubmissionQueue(implicit);
    private final GrantSlot grant = new GrantSlot(submissions);
    private final DirectLedger direct;
    private final FastPathCounters fast;
    private final LaneCounters laneCounters = new LaneCounters();
    private final LatencyRecorder flushLatency = new LatencyRecorder();
    private final LatencyRecorder fenceLatency = new LatencyRecorder();
    private final LaneEvents events;
    /** The lane table as last published by the actor; described when asked. */
    private volatile LaneTable laneTable;
    private volatile boolean lanesDown;
    private volatile boolean closing;
    private volatile FencelineException failure;

    /** Written by the endpoint actor at each lane change, read by the worker's keepalive round. */
    private volatile boolean keepaliveWanted = true;
    /**
     * The worker's round ticks the endpoint only from this time on (the actor's clock): 0 while work
     * waits for a lane (every round), later while the endpoint is quiet. Lowered to 0 by whoever makes
     * work wait (the actor, a posting thread); raised only by the actor after a tick.
     */
    private volatile long keepaliveDue;

    /**
     * @param name the endpoint's name, for messages
     * @param peer the peer worker
     */
    public EndpointChannel(String name, WorkerAddress peer) {
        this(name, peer, LaneEvents.NONE, WorkerCounts.create());
    }

    /**
     * @param name the endpoint's name, for messages
     * @param peer the peer worker
     * @param sink where the endpoint's lane events go (its worker's listeners)
     * @param worker its worker's running totals, which each of its counts also goes to
     */
    EndpointChannel(String name, WorkerAddress peer, LaneEvents.Sink sink, WorkerCounts worker) {
        this.name = name;
        this.peer = peer;
        this.events = new LaneEvents(name, peer, sink);
        this.counters = new EndpointCounters(worker);
        this.direct = new DirectLedger(implicit, submissions, worker);
        this.fast = new FastPathCounters(worker);
    }

    private volatile dev.fenceline.internal.LocalRegions localRegions = dev.fenceline.internal.LocalRegions.NONE;

    /** @param r where the endpoint finds the registration of an operation's local buffer */
    void localRegions(dev.fenceline.internal.LocalRegions r) {
        this.localRegions = r;
    }

    /** @return where the endpoint finds the registration of an operation's local buffer */
    dev.fenceline.internal.LocalRegions localRegions() {
        return localRegions;
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

    SubmissionQueue submissions() {
        return submissions;
    }

    GrantSlot grant() {
        return grant;
    }

    DirectLedger direct() {
        return direct;
    }

    ImplicitErrors implicit() {
        return implicit;
    }

    FastPathCounters fast() {
        return fast;
    }

    LaneCounters laneCounters() {
        return laneCounters;
    }

    LatencyRecorder flushLatency() {
        return flushLatency;
    }

    LatencyRecorder fenceLatency() {
        return fenceLatency;
    }

    LaneEvents events() {
        return events;
    }

    /**
     * Queues a request for the actor (see {@link SubmissionQueue#submit}).
     *
     * @param r the request
     */
    public void submit(Request r) {
        submissions.submit(r);
    }

    /** @return the error every later submission fails with, or null while the actor takes them */
    public FencelineException terminal() {
        return submissions.terminal();
    }

    /**
     * Actor side: from now on submitters fail their own requests with {@code e}, and flushes that
     * wait for direct answers fail with it.
     *
     * @param e the endpoint's end
     */
    void terminate(FencelineException e) {
        submissions.terminate(e);
        direct.fail(submissions.terminal());
    }

    /**
     * What a flush reports (see {@link DirectLedger#flushError}).
     *
     * @param before the flush's submission number (exclusive bound)
     * @param directTarget the direct messages sent before it
     * @return the error, or null
     */
    FencelineException flushError(long before, long directTarget) {
        return direct.flushError(before, directTarget);
    }

    /** @return the lane table as last published by the actor */
    public List<LaneInfo> lanes() {
        LaneTable t = laneTable;
        if (t == null) {
            return List.of();
        }
        List<LaneInfo> all = t.describe(); // made when asked: an endpoint keeps only its table
        if (!lanesDown) {
            return all;
        }
        return all.stream().map(l -> l.live() ? new LaneInfo(l.index(), l.generation(), l.types(), l.transport(),
                false, l.connectionId()) : l).toList();
    }

    /**
     * @return whether some live lane is probed by keepalive (else the worker does not tick the
     *     endpoint: its transports watch every lane's peer themselves)
     */
    boolean keepaliveWanted() {
        return keepaliveWanted;
    }

    void keepaliveWanted(boolean wanted) {
        this.keepaliveWanted = wanted;
    }

    /** @return from when the worker's keepalive round ticks the endpoint */
    long keepaliveDue() {
        return keepaliveDue;
    }

    /** @param due the actor's clock: from when the worker's round ticks the endpoint again */
    void keepaliveDue(long due) {
        this.keepaliveDue = due;
    }

    /** Work waits for a lane: the worker ticks the endpoint every round again. Any thread. */
    void keepaliveNow() {
        if (keepaliveDue != 0) { // a read, and a write only on the change: this is on posting threads' path
            keepaliveDue = 0;
        }
    }

    /** @param table the actor's lane table now (immutable) */
    void publishLanes(LaneTable table) {
        this.laneTable = table;
    }

    /** The endpoint ended: its lanes are closed, so none is listed as live any more. */
    void publishLanesDown() {
        lanesDown = true;
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

    /** @return operations the fast path performed */
    public long fastOperations() {
        return fast.operations();
    }

    /** @return fast-path operations that were refused */
    public long fastFailures() {
        return fast.failures();
    }

    /** @return flushes completed under a grant, without the actor */
    public long fastFlushes() {
        return fast.flushes();
    }
}
