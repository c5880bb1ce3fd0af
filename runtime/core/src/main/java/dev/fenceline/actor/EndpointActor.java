package dev.fenceline.actor;

import dev.fenceline.ConfigurationException;
import dev.fenceline.Endpoint;
import dev.fenceline.EndpointClosedException;
import dev.fenceline.EndpointFailedException;
import dev.fenceline.FencelineException;
import dev.fenceline.actor.EndpointCounters.Counter;
import dev.fenceline.actor.LaneProtocol.LaneAdded;
import dev.fenceline.actor.LaneProtocol.LaneFailed;
import dev.fenceline.actor.LaneProtocol.LaneFlushFailed;
import dev.fenceline.actor.LaneProtocol.LaneFlushed;
import dev.fenceline.actor.LaneProtocol.LaneReady;
import dev.fenceline.actor.LaneProtocol.LaneRecovered;
import dev.fenceline.actor.LaneProtocol.LaneReplaced;
import dev.fenceline.actor.LaneProtocol.LanesChanged;
import dev.fenceline.actor.LaneProtocol.OpCompleted;
import dev.fenceline.actor.LaneProtocol.OpFailed;
import dev.fenceline.internal.ErrorMode;
import dev.fenceline.internal.FenceDecision;
import dev.fenceline.internal.FenceMode;
import dev.fenceline.internal.FenceQueue;
import dev.fenceline.internal.FenceState;
import dev.fenceline.internal.FencelineSettings;
import dev.fenceline.internal.LaneSelector;
import dev.fenceline.internal.LaneTable;
import dev.fenceline.internal.OpClass;
import dev.fenceline.spi.DirectAccess;
import dev.fenceline.spi.LaneConnection;
import dev.fenceline.spi.LaneListener;
import dev.fenceline.spi.PostStatus;
import dev.fenceline.spi.TransportOp;
import java.nio.ByteBuffer;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.TreeMap;
import java.util.concurrent.CompletionStage;
import java.util.function.Supplier;
import org.agrona.collections.Long2ObjectHashMap;
import org.apache.pekko.Done;
import org.apache.pekko.actor.typed.ActorRef;
import org.apache.pekko.actor.typed.Behavior;
import org.apache.pekko.actor.typed.PostStop;
import org.apache.pekko.actor.typed.javadsl.ActorContext;
import org.apache.pekko.actor.typed.javadsl.Behaviors;
import org.apache.pekko.actor.typed.javadsl.TimerScheduler;
import org.slf4j.Logger;

/**
 * One endpoint: owns its lane table, fence state, fence queue and outstanding requests. Everything
 * that changes them is a message handled in order; nothing here blocks or calls into another
 * component's progress. States: {@link #connecting}, {@link #ready}, {@link #closed} and
 * {@link #failed}.
 *
 * <p>User operations do not arrive one message each: the facade queues them on the
 * {@link EndpointChannel} and sends one {@link DrainSubmissions} per burst.
 */
public final class EndpointActor {

    /**
     * The endpoint's message protocol: the messages below, and the lane events of
     * {@link LaneProtocol}, which transports cause (through the endpoint's listener).
     */
    public sealed interface Command permits DrainSubmissions, Close, Connected, DrainFenceQueue, ReplayDone,
            KeepaliveTick, StrongFenceDone, LaneProtocol.OpCompleted, LaneProtocol.OpsCompleted,
            LaneProtocol.OpFailed, LaneProtocol.LaneFlushed, LaneProtocol.LaneFlushFailed, LaneProtocol.LaneReady, LaneProtocol.LaneFailed,
            LaneProtocol.LaneReplaced, LaneProtocol.LaneRecovered, LaneProtocol.LaneAdded, LaneProtocol.LanesChanged {
    }

    /** Take the queued submissions (sent by the facade, at most one in the mailbox at a time). */
    public record DrainSubmissions() implements Command {
        /** The only instance. */
        public static final DrainSubmissions INSTANCE = new DrainSubmissions();
    }

    /**
     * Close after the flush that the facade queued behind every earlier operation.
     *
     * @param replyTo told when closed
     */
    public record Close(ActorRef<Done> replyTo) implements Command {
    }











    /**
     * The transport connected the lanes (or failed to).
     *
     * @param lanes the connections, or null on failure
     * @param error the failure, or null
     */
    record Connected(List<LaneConnection> lanes, Throwable error) implements Command {
    }

    /** Self-message: drain the fence queue (deduplicated). */
    record DrainFenceQueue() implements Command {
        static final DrainFenceQueue INSTANCE = new DrainFenceQueue();
    }

    /** Self-message: the replay after a reconfiguration is over; flushes and fences may start again. */
    record ReplayDone() implements Command {
        static final ReplayDone INSTANCE = new ReplayDone();
    }

    /** Timer: probe idle lanes, fail lanes whose probe is overdue. */
    record KeepaliveTick() implements Command {
        static final KeepaliveTick INSTANCE = new KeepaliveTick();
    }

    /** Self-message: the in-flight strong fence's lane flushes all completed. */
    record StrongFenceDone() implements Command {
        static final StrongFenceDone INSTANCE = new StrongFenceDone();
    }

    /**
     * Reply to whoever asked for the endpoint.
     *
     * @param endpoint the ready endpoint, or null
     * @param error why it could not be connected, or null
     */
    public record ConnectResult(Endpoint endpoint, FencelineException error) {
    }

    /** A lane flush token that belongs to the strong fence rather than to a user flush. */
    private static final Object FENCE_FLUSH = new Object();
    /** A lane flush that probes an idle lane. */
    private static final Object KEEPALIVE_PROBE = new Object();

    /** One posted (or lane-parked) fragment: which request, and where it went. */
    private record Inflight(Request request, int fragment, int lane, long connectionId, boolean deduplicated) {
    }

    /** One lane flush: whose (a user flush or {@link #FENCE_FLUSH}), and where it went. */
    private record FlushToken(Object owner, int lane, long connectionId) {
    }

    private final ActorContext<Command> ctx;
    /** The system scheduler's time: virtual under the test kit's deterministic simulation. */
    private final java.util.function.LongSupplier clock;
    private final TimerScheduler<Command> timers;
    private final Logger log;
    private final FencelineSettings settings;
    private final EndpointChannel channel;
    private final Endpoint facade;
    private final EndpointCounters counters;

    private LaneTable lanes = LaneTable.of(List.of());
    private int[][] selection = LaneSelector.select(lanes);
    private final int[] roundRobin = new int[OpClass.values().length];
    private ArrayDeque<Object>[] pending = newPending(0);

    private FenceState fence = FenceState.initial();
    private final FenceQueue<Request> fenceQueue = new FenceQueue<>(Request::epoch);
    private boolean fenceDrainScheduled;
    private int fenceFlushesOutstanding;

    private long nextSeq = 1;
    private long nextToken = 1;
    /** The lane (and its connection) of the last grant that took active messages, or -1. */
    private int directLane = -1;
    private long directConnection;
    /** The channel's count of direct active messages answered by a peer, at the last keepalive tick. */
    private long lastDirectAnswered;
    private long nextSn;
    /** Per slot, the last connection given up while failing over: closed when the endpoint ends. */
    private final LaneConnection[] givenUp = new LaneConnection[LaneTable.MAX_LANES];
    /** Requests with sequence numbers, in sequence order, until they complete: the low-water mark. */
    private final ArrayDeque<Request> bySequence = new ArrayDeque<>();
    private final Long2ObjectHashMap<Inflight> byToken = new Long2ObjectHashMap<>();
    private final Long2ObjectHashMap<Request> outstanding = new Long2ObjectHashMap<>();
    private final Long2ObjectHashMap<FlushToken> flushTokens = new Long2ObjectHashMap<>();
    private final ArrayList<Request> flushes = new ArrayList<>();
    /** Between a reconfiguration and its {@link ReplayDone}: no flush and no strong fence starts. */
    private boolean replaying;
    /** The in-flight strong fence lost a lane flush to a reconfiguration: re-issue it after the replay. */
    private boolean fenceRestartPending;
    /** The epoch the in-flight strong fence was started for. */
    private long fenceTarget;
    /** Per slot: when the lane was last heard from, and when its unanswered probe went out (0: none). */
    private long[] lastHeard = new long[0];
    private long[] probeSent = new long[0];
    /** Slots whose current connection has carried an operation or a flush (a fresh flush skips the rest). */
    private long used;

    private EndpointActor(ActorContext<Command> ctx, TimerScheduler<Command> timers, FencelineSettings settings,
            EndpointChannel channel, Endpoint facade) {
        this.ctx = ctx;
        this.clock = dev.fenceline.spi.NanoClock.of(ctx.getSystem());
        this.timers = timers;
        this.log = ctx.getLog();
        this.settings = settings;
        this.channel = channel;
        this.facade = facade;
        this.counters = channel.counters();
        ActorRef<Command> self = ctx.getSelf();
        channel.wakeup(() -> self.tell(DrainSubmissions.INSTANCE));
    }

    /**
     * An endpoint that connects its lanes first.
     *
     * @param settings the runtime settings
     * @param channel shared with the facade
     * @param facade what the connect requester receives
     * @param connect starts the transport connection
     * @param replyTo told when the endpoint is ready or failed to connect
     * @return the behavior
     */
    public static Behavior<Command> create(FencelineSettings settings, EndpointChannel channel, Endpoint facade,
            Supplier<CompletionStage<List<LaneConnection>>> connect, ActorRef<ConnectResult> replyTo) {
        return Behaviors.setup(ctx -> Behaviors.withTimers(timers -> {
            EndpointActor a = new EndpointActor(ctx, timers, settings, channel, facade);
            java.util.concurrent.CompletableFuture<List<LaneConnection>> connecting = connect.get().toCompletableFuture();
            // Time out a copy, not the transport's own future: lanes that arrive after the timeout
            // are then closed here instead of leaking.
            java.util.concurrent.CompletableFuture<List<LaneConnection>> bounded = connecting.thenApply(l -> l)
                    .orTimeout(settings.connectTimeout().toMillis(), java.util.concurrent.TimeUnit.MILLISECONDS);
            connecting.thenAccept(late -> {
                if (bounded.isCompletedExceptionally()) {
                    late.forEach(LaneConnection::close);
                }
            });
            ctx.pipeToSelf(bounded, (l, e) -> new Connected(l, e));
            return a.connecting(replyTo);
        }));
    }

    /**
     * An endpoint over lanes that are already connected (tests, and transports that connect
     * synchronously).
     *
     * @param settings the runtime settings
     * @param channel shared with the facade
     * @param facade the facade
     * @param connections the lanes
     * @return the behavior
     */
    public static Behavior<Command> createConnected(FencelineSettings settings, EndpointChannel channel,
            Endpoint facade, List<LaneConnection> connections) {
        return Behaviors.setup(ctx -> Behaviors.withTimers(timers -> {
            EndpointActor a = new EndpointActor(ctx, timers, settings, channel, facade);
            a.install(connections);
            return a.ready();
        }));
    }

    // ---------------------------------------------------------------- states

    private Behavior<Command> connecting(ActorRef<ConnectResult> replyTo) {
        return Behaviors.receive(Command.class)
                .onMessage(Connected.class, m -> onConnected(m, replyTo))
                // Submissions wait in the channel until the lanes are there.
                .onMessage(DrainSubmissions.class, m -> Behaviors.same())
                .onMessage(Close.class, m -> {
                    channel.markClosing();
                    channel.terminate(new EndpointClosedException("endpoint " + channel.name() + " is closed"));
                    rejectSubmissions(() -> new EndpointClosedException("endpoint " + channel.name() + " is closed"));
                    m.replyTo().tell(Done.getInstance());
                    return closed();
                })
                .build();
    }

    private Behavior<Command> ready() {
        return Behaviors.receive(Command.class)
                .onMessage(DrainSubmissions.class, m -> onDrainSubmissions())
                .onMessage(OpCompleted.class, this::onOpCompleted)
                .onMessage(LaneProtocol.OpsCompleted.class, this::onOpsCompleted)
                .onMessage(OpFailed.class, this::onOpFailed)
                .onMessage(LaneFlushed.class, this::onLaneFlushed)
                .onMessage(LaneFlushFailed.class, this::onLaneFlushFailed)
                .onMessage(LaneReady.class, this::onLaneReady)
                .onMessage(LaneFailed.class, this::onLaneFailed)
                .onMessage(LaneReplaced.class, this::onLaneReplaced)
                .onMessage(LaneRecovered.class, this::onLaneRecovered)
                .onMessage(LaneAdded.class, this::onLaneAdded)
                .onMessage(LanesChanged.class, this::onLanesChanged)
                .onMessage(ReplayDone.class, m -> onReplayDone())
                .onMessage(KeepaliveTick.class, m -> onKeepaliveTick())
                .onMessage(DrainFenceQueue.class, m -> onDrainFenceQueue())
                .onMessage(StrongFenceDone.class, m -> onStrongFenceDone())
                .onMessage(Close.class, this::onClose)
                .onSignal(PostStop.class, s -> onUnexpectedStop())
                .build();
    }

    /**
     * The actor stopped while ready: only an unexpected exception does that (Pekko's default
     * supervision stops a failed actor). Nothing may hang: every request completes with an error.
     */
    private Behavior<Command> onUnexpectedStop() {
        enterFailed(new EndpointFailedException("endpoint " + channel.name()
                + " stopped after an internal error (see the log); its requests are failed"));
        return Behaviors.same();
    }

    /** Closed by the user: everything submitted from now on fails with {@link EndpointClosedException}. */
    private Behavior<Command> closed() {
        return Behaviors.receive(Command.class)
                .onMessage(DrainSubmissions.class, m -> rejectSubmissions(
                        () -> new EndpointClosedException("endpoint " + channel.name() + " is closed")))
                .onMessage(Close.class, m -> {
                    m.replyTo().tell(Done.getInstance());
                    return Behaviors.same();
                })
                .onAnyMessage(this::closeHandedOver)
                .build();
    }

    /** A connection that arrives after the end is closed, never leaked. */
    private Behavior<Command> closeHandedOver(Command m) {
        if (m instanceof LaneReplaced r) {
            r.connection().close();
        } else if (m instanceof LaneRecovered r) {
            r.connection().close();
        } else if (m instanceof LaneAdded a) {
            a.connection().close();
        } else if (m instanceof LanesChanged c) {
            c.connections().forEach(x -> {
                if (x != null) {
                    x.close();
                }
            });
        }
        return Behaviors.same();
    }

    /** Failed: every request fails with the endpoint's failure. */
    private Behavior<Command> failed(EndpointFailedException cause) {
        return Behaviors.receive(Command.class)
                .onMessage(DrainSubmissions.class, m -> rejectSubmissions(() -> cause))
                .onMessage(Close.class, m -> {
                    channel.markClosing();
                    m.replyTo().tell(Done.getInstance());
                    return Behaviors.same();
                })
                .onAnyMessage(this::closeHandedOver)
                .build();
    }

    // ---------------------------------------------------------------- connection

    private Behavior<Command> onConnected(Connected m, ActorRef<ConnectResult> replyTo) {
        if (m.error() != null) {
            Throwable cause = m.error() instanceof java.util.concurrent.CompletionException c && c.getCause() != null
                    ? c.getCause() : m.error();
            EndpointFailedException e = new EndpointFailedException("endpoint " + channel.name() + " could not connect to "
                    + channel.peer() + ": " + cause, cause);
            log.warn("{}", e.getMessage());
            replyTo.tell(new ConnectResult(null, e));
            return enterFailed(e);
        }
        try {
            install(m.lanes());
        } catch (FencelineException e) {
            m.lanes().forEach(LaneConnection::close);
            replyTo.tell(new ConnectResult(null, e));
            return enterFailed(new EndpointFailedException(e.getMessage(), e));
        }
        log.debug("endpoint {} connected: {}", channel.name(), channel.lanes());
        replyTo.tell(new ConnectResult(facade, null));
        onDrainSubmissions();
        return ready();
    }

    private void install(List<LaneConnection> connections) {
        LaneTable table = LaneTable.of(connections);
        if (settings.fenceMode() == FenceMode.WEAK && Long.bitCount(LaneSelector.fencedLanes(table)) > 1) {
            throw new ConfigurationException("fenceline.fence.mode = weak needs one lane for all RMA and atomics, but"
                    + " endpoint " + channel.name() + " would use lanes " + lanesOf(LaneSelector.fencedLanes(table))
                    + " (" + table.describe() + "); use mode endpoint or strong");
        }
        for (int i = 0; i < connections.size(); i++) {
            bind(i, connections.get(i));
        }
        setLanes(table);
    }

    private void bind(int index, LaneConnection c) {
        c.bind(new LaneProtocol.Listener(ctx.getSelf(), index, c.id()));
    }

    private void setLanes(LaneTable table) {
        if (lastHeard.length != table.size()) {
            long now = clock.getAsLong();
            int old = lastHeard.length;
            lastHeard = java.util.Arrays.copyOf(lastHeard, table.size());
            probeSent = java.util.Arrays.copyOf(probeSent, table.size());
            for (int i = old; i < table.size(); i++) {
                lastHeard[i] = now;
            }
        }
        if (!settings.keepaliveInterval().isZero() && !timers.isTimerActive("keepalive")) {
            timers.startTimerWithFixedDelay("keepalive", KeepaliveTick.INSTANCE, settings.keepaliveInterval());
        }
        lanes = table;
        selection = LaneSelector.select(table);
        if (pending.length != table.size()) {
            ArrayDeque<Object>[] p = newPending(table.size());
            System.arraycopy(pending, 0, p, 0, Math.min(pending.length, p.length));
            pending = p;
        }
        channel.publishLanes(table.describe());
    }

    @SuppressWarnings({"unchecked", "rawtypes"}) // a generic array: one pending queue per lane
    private static ArrayDeque<Object>[] newPending(int n) {
        ArrayDeque<Object>[] p = new ArrayDeque[n];
        for (int i = 0; i < n; i++) {
            p[i] = new ArrayDeque<>();
        }
        return p;
    }

    // ---------------------------------------------------------------- submissions

    private Behavior<Command> onDrainSubmissions() {
        channel.drainStarted();
        int budget = settings.submitBatch();
        Request r;
        while (budget-- > 0 && (r = channel.poll()) != null) {
            accept(r);
        }
        if (budget < 0) {
            channel.drainAgain(); // more may remain: yield the thread, keep the batch bounded
        }
        if (!flushes.isEmpty()) {
            progressFlushes(); // the wake-up may be the answer to a direct active message
        }
        maybeGrant();
        return Behaviors.same();
    }

    /**
     * The fast path by grant (DESIGN §2): when nothing of this endpoint is outstanding (no request,
     * no fence, no flush, nothing parked, no replay) and one lane that can act directly carries both
     * short RMA and atomics, calling threads may perform such operations on it themselves. Any
     * submission voids the grant (its stamp), so a thread's direct operation never passes anything
     * it submitted before; a direct operation is complete and visible on return, so fences and
     * flushes need nothing from it.
     */
    private void maybeGrant() {
        if (channel.isClosing() || !outstanding.isEmpty() || !fenceQueue.isEmpty() || !flushes.isEmpty() || replaying
                || fence.fenceInFlight()) {
            channel.revokeGrant();
            return;
        }
        for (int i = 0; i < lanes.size(); i++) {
            if (!pending[i].isEmpty()) {
                channel.revokeGrant();
                return;
            }
        }
        int[] rma = selection[OpClass.RMA_SHORT.ordinal()];
        int[] amo = selection[OpClass.ATOMIC.ordinal()];
        if (rma.length == 1 && amo.length == 1 && rma[0] == amo[0] && lanes.isLive(rma[0])
                && lanes.connection(rma[0]) instanceof DirectAccess direct) {
            int[] am = selection[OpClass.ACTIVE_MESSAGE.ordinal()];
            // Active messages are ordered per lane: direct ones only on the lane the others take.
            boolean messages = am.length == 1 && am[0] == rma[0];
            long connection = lanes.connection(rma[0]).id();
            if (messages && connection != directConnection && !channel.directSettled()) {
                // Direct messages still out on another lane: their answers and this lane's would
                // interleave, and a flush counts answers. Grant again once they are in.
                channel.revokeGrant();
                channel.directAnsweredOrWake(channel.directSent());
                return;
            }
            if (messages) {
                directLane = rma[0];
                directConnection = connection;
            }
            channel.publishGrant(direct, messages);
        } else {
            channel.revokeGrant();
        }
    }

    private Behavior<Command> rejectSubmissions(Supplier<? extends FencelineException> error) {
        channel.drainStarted();
        Request r;
        while ((r = channel.poll()) != null) {
            counters.increment(Counter.OPERATIONS);
            counters.increment(Counter.FAILED);
            r.fail(error.get());
        }
        return Behaviors.same();
    }

    private void accept(Request r) {
        r.seq = nextSeq++;
        if (r.kind == Request.Kind.FLUSH) {
            flushes.add(r);
            progressFlushes();
            return;
        }
        counters.increment(Counter.OPERATIONS);
        int lane = pickLane(r.opClass(settings));
        if (lane < 0) {
            counters.increment(Counter.FAILED);
            r.fail(new EndpointFailedException("endpoint " + channel.name() + " has no live lane for " + r.kind
                    + " (" + r.opClass(settings) + "); lanes: " + lanes.describe()));
            return;
        }
        r.lane = lane;
        outstanding.put(r.seq, r);
        if (!r.kind.fenced()) {
            post(r);
            return;
        }
        admitOrQueue(r, false);
    }

    /** Spreads a class's requests over its candidate lanes (multi-rail), or -1 if it has none. */
    private int pickLane(OpClass c) {
        int[] candidates = selection[c.ordinal()];
        if (candidates.length == 0) {
            return -1;
        }
        if (candidates.length == 1) {
            return candidates[0];
        }
        int i = roundRobin[c.ordinal()]++;
        return candidates[Math.floorMod(i, candidates.length)];
    }

    /**
     * The fence decision at a request's first progress (DESIGN §3.2), and again when a restart
     * re-selects its lane. During a replay a strong fence never starts: the request waits in the
     * fence queue and the drain after {@link ReplayDone} decides again.
     *
     * @return whether the request was posted (false: it is in the fence queue)
     */
    private boolean admitOrQueue(Request r, boolean fromQueueHead) {
        if (!lanes.isLive(r.lane)) {
            // Selected before a reconfiguration took its lane: select again (the epoch stays).
            int lane = pickLane(r.opClass(settings));
            if (lane < 0) {
                retire(r);
                counters.increment(Counter.FAILED);
                r.fail(new EndpointFailedException("endpoint " + channel.name() + " has no live lane for " + r.kind
                        + " any more; lanes: " + lanes.describe()));
                return true; // completed: not queued
            }
            r.lane = lane;
        }
        // The hot path: nothing to decide, nothing to allocate. Never past a request that waits in
        // the fence queue: the drain that releases it may still be in the mailbox.
        if ((fromQueueHead || fenceQueue.isEmpty()) && fence.admitsUnchanged(r.epoch, 1L << r.lane)) {
            post(r);
            return true;
        }
        FenceDecision d = fence.decide(settings.fenceMode(), r.epoch, 1L << r.lane, lanes.liveMask(),
                !fromQueueHead && !fenceQueue.isEmpty());
        if (log.isTraceEnabled()) {
            log.trace("endpoint {}: {} lane {} from {} -> {}", channel.name(), r, r.lane, fence, d);
        }
        if (d instanceof FenceDecision.Admit a) {
            fence = d.next();
            if (a.why() == FenceDecision.Why.FAST_FORWARD) {
                counters.increment(Counter.FAST_FORWARDS);
            }
            post(r);
            return true;
        }
        if (d instanceof FenceDecision.WeakFence w) {
            fence = d.next();
            counters.increment(Counter.WEAK_FENCES);
            lanes.connection(w.lane()).fence();
            post(r);
            return true;
        }
        if (d instanceof FenceDecision.StartStrongFence s && !replaying) {
            fence = d.next();
            fenceTarget = fence.inFlightEpoch();
            startStrongFence(s.lanes());
        }
        if (fromQueueHead) {
            fenceQueue.pushFront(r);
        } else {
            fenceQueue.add(r);
            counters.increment(Counter.FENCE_QUEUED);
            counters.max(Counter.MAX_FENCE_QUEUE_DEPTH, fenceQueue.size());
        }
        return false;
    }

    private void startStrongFence(long mask) {
        counters.increment(Counter.STRONG_FENCES);
        log.debug("endpoint {}: strong fence to epoch {} over lanes {}", channel.name(), fence.inFlightEpoch(),
                lanesOf(mask));
        issueFenceFlushes(mask);
    }

    private void issueFenceFlushes(long mask) {
        fenceFlushesOutstanding = 0;
        for (int i = 0; i < lanes.size(); i++) {
            if ((mask & (1L << i)) != 0 && lanes.isLive(i) && postFlush(i, FENCE_FLUSH)) {
                fenceFlushesOutstanding++;
            }
        }
        if (fenceFlushesOutstanding == 0) {
            // Never complete a fence synchronously inside the decision: resume through the mailbox.
            ctx.getSelf().tell(StrongFenceDone.INSTANCE);
        }
    }

    private Behavior<Command> onStrongFenceDone() {
        if (!fence.fenceInFlight() || fenceFlushesOutstanding > 0 || fenceRestartPending) {
            return Behaviors.same();
        }
        fence = fence.strongFenceCompleted();
        scheduleFenceDrain();
        return Behaviors.same();
    }

    private void scheduleFenceDrain() {
        if (!fenceDrainScheduled && !fenceQueue.isEmpty()) {
            fenceDrainScheduled = true;
            ctx.getSelf().tell(DrainFenceQueue.INSTANCE);
        }
    }

    private Behavior<Command> onDrainFenceQueue() {
        fenceDrainScheduled = false;
        if (replaying) {
            return Behaviors.same(); // ReplayDone schedules the drain again
        }
        while (!fenceQueue.isEmpty() && !fence.fenceInFlight()) {
            Request r = fenceQueue.poll();
            if (!admitOrQueue(r, true)) {
                break;
            }
        }
        progressFlushes();
        maybeGrant();
        return Behaviors.same();
    }

    // ---------------------------------------------------------------- posting

    private void post(Request r) {
        r.posted = true;
        LaneConnection conn = lanes.connection(r.lane);
        int[] only = r.resend;
        r.resend = null;
        switch (r.kind) {
            case PUT, GET -> {
                ByteBuffer local = r.local;
                int total = local.remaining();
                if (r.fragmentSize == 0) {
                    r.fragmentSize = Math.max(1, Math.min(settings.fragmentSize(), conn.maxFragment()));
                } else if (conn.maxFragment() < r.fragmentSize) {
                    // A restart must resend the same byte ranges under the same sequence numbers.
                    FencelineException e = new EndpointFailedException("endpoint " + channel.name() + ": " + r
                            + " was split into fragments of " + r.fragmentSize + " bytes, but lane " + r.lane
                            + " takes at most " + conn.maxFragment() + " after a reconfiguration");
                    retire(r);
                    counters.increment(Counter.FAILED);
                    r.fail(e);
                    return;
                }
                int frag = r.fragmentSize;
                int n = total == 0 ? 0 : (total + frag - 1) / frag;
                if (n == 0) {
                    finish(r, 0);
                    return;
                }
                if (r.firstSn < 0) {
                    r.firstSn = nextSn;
                    nextSn += n;
                    r.fragmentsOutstanding = n;
                    bySequence.addLast(r);
                }
                TransportOp.Kind kind = r.kind == Request.Kind.PUT ? TransportOp.Kind.PUT : TransportOp.Kind.GET;
                int count = only == null ? n : only.length;
                for (int k = 0; k < count && !r.done; k++) {
                    int fragment = only == null ? k : only[k];
                    int off = fragment * frag;
                    int len = Math.min(frag, total - off);
                    postOp(r, fragment, TransportOp.rma(kind, nextToken++, r.remoteAddress + off, r.key,
                            local.slice(local.position() + off, len)));
                }
            }
            case ATOMIC_POST, ATOMIC_FETCH, CSWAP -> {
                firstPost(r);
                TransportOp.Kind kind = switch (r.kind) {
                    case ATOMIC_POST -> TransportOp.Kind.ATOMIC_POST;
                    case ATOMIC_FETCH -> TransportOp.Kind.ATOMIC_FETCH;
                    default -> TransportOp.Kind.CSWAP;
                };
                postOp(r, 0, TransportOp.atomic(kind, nextToken++, r.remoteAddress, r.key, r.atomicOp, r.width,
                        r.operand, r.compare));
            }
            case AM -> {
                firstPost(r);
                postOp(r, 0, TransportOp.activeMessage(nextToken++, r.amId, r.header, r.local));
            }
            default -> throw new IllegalStateException("cannot post " + r);
        }
    }

    private void firstPost(Request r) {
        if (r.firstSn < 0) {
            r.firstSn = nextSn++;
            r.fragmentsOutstanding = 1;
            bySequence.addLast(r);
        }
    }

    /**
     * The smallest sequence number of a request not yet complete: targets forget what lies below
     * it (DedupWindow). Requests enter {@link #bySequence} in sequence order; completed ones leave
     * from the head, so this is O(1) amortized and allocation-free.
     */
    private long lowWater() {
        Request h;
        while ((h = bySequence.peekFirst()) != null && h.done) {
            bySequence.pollFirst();
        }
        return h == null ? nextSn : h.firstSn;
    }

    private void postOp(Request r, int fragment, TransportOp op) {
        used |= 1L << r.lane;
        op.identify(channel.endpointId(), r.firstSn + fragment, lowWater());
        LaneConnection conn = lanes.connection(r.lane);
        if (r.trace != null) {
            op.trace(r.trace);
            r.trace.admitted(r.lane, op.sequence(), conn.deduplicates(), conn.reportsVisibility());
        }
        byToken.put(op.token(), new Inflight(r, fragment, r.lane, conn.id(), conn.deduplicates()));
        ArrayDeque<Object> waiting = pending[r.lane];
        if (!waiting.isEmpty()) {
            waiting.add(op);
            return;
        }
        tryPost(r.lane, op);
    }

    /** @return false if the lane had no room (the op is then parked at the head of its pending queue) */
    private boolean tryPost(int lane, TransportOp op) {
        PostStatus status;
        try {
            status = lanes.connection(lane).post(op);
        } catch (FencelineException e) {
            opFailed(op.token(), e);
            return true;
        }
        switch (status) {
            case COMPLETED -> opCompleted(op.token(), op.result());
            case NO_RESOURCE -> {
                pending[lane].addFirst(op);
                return false;
            }
            default -> { }
        }
        return true;
    }

    /** @return whether a flush completion will follow (false: the lane was already flushed) */
    private boolean postFlush(int lane, Object owner) {
        used |= 1L << lane;
        long token = nextToken++;
        flushTokens.put(token, new FlushToken(owner, lane, lanes.connection(lane).id()));
        ArrayDeque<Object> waiting = pending[lane];
        if (!waiting.isEmpty()) {
            waiting.add(new PendingFlush(token));
            return true;
        }
        PostStatus s = owner == KEEPALIVE_PROBE ? lanes.connection(lane).keepalive(token)
                : lanes.connection(lane).flush(token);
        if (s == PostStatus.NO_RESOURCE) {
            waiting.add(new PendingFlush(token));
            return true;
        }
        if (s == PostStatus.COMPLETED) {
            flushTokens.remove(token);
            return false;
        }
        return true;
    }

    private record PendingFlush(long token) {
    }

    private Behavior<Command> onLaneReady(LaneReady m) {
        if (!current(m.lane(), m.connectionId())) {
            return Behaviors.same();
        }
        ArrayDeque<Object> waiting = pending[m.lane()];
        try {
            drainPending(m.lane(), waiting);
        } finally {
            maybeGrant();
        }
        return Behaviors.same();
    }

    private void drainPending(int lane, ArrayDeque<Object> waiting) {
        while (!waiting.isEmpty()) {
            Object head = waiting.poll();
            if (head instanceof TransportOp op) {
                if (!tryPost(lane, op)) {
                    break;
                }
            } else {
                long token = ((PendingFlush) head).token();
                PostStatus s = lanes.connection(lane).flush(token);
                if (s == PostStatus.NO_RESOURCE) {
                    waiting.addFirst(head);
                    break;
                }
                if (s == PostStatus.COMPLETED) {
                    laneFlushed(token);
                }
            }
        }
    }

    // ---------------------------------------------------------------- completions

    private boolean current(int lane, long connectionId) {
        return lane >= 0 && lane < lanes.size() && lanes.connection(lane) != null
                && lanes.connection(lane).id() == connectionId;
    }

    private void heard(int lane, long connectionId) {
        if (current(lane, connectionId)) {
            lastHeard[lane] = clock.getAsLong();
        }
    }

    private Behavior<Command> onOpCompleted(OpCompleted m) {
        heard(m.lane(), m.connectionId());
        opCompleted(m.token(), m.value());
        maybeGrant();
        return Behaviors.same();
    }

    private Behavior<Command> onOpsCompleted(LaneProtocol.OpsCompleted m) {
        heard(m.lane(), m.connectionId());
        long[] tokens = m.tokens();
        long[] values = m.values();
        for (int i = 0; i < tokens.length; i++) {
            opCompleted(tokens[i], values[i]);
        }
        maybeGrant();
        return Behaviors.same();
    }

    private Behavior<Command> onOpFailed(OpFailed m) {
        heard(m.lane(), m.connectionId());
        opFailed(m.token(), m.error());
        maybeGrant();
        return Behaviors.same();
    }

    private void opCompleted(long token, long value) {
        Inflight f = byToken.remove(token);
        if (f == null || f.request().done) {
            return; // a fragment of a connection a reconfiguration dropped
        }
        fragmentDone(f.request(), value);
    }

    private void opFailed(long token, FencelineException e) {
        Inflight f = byToken.remove(token);
        if (f == null || f.request().done) {
            return;
        }
        Request r = f.request();
        log.debug("endpoint {}: {} failed: {}", channel.name(), r, e.getMessage());
        if (r.error == null) {
            r.error = e;
        }
        fragmentDone(r, 0);
    }

    /**
     * A request completes only when every fragment is accounted for: its buffer may still be in use
     * by a fragment in flight, so failing it early would hand the buffer back too soon.
     */
    private void fragmentDone(Request r, long value) {
        if (--r.fragmentsOutstanding == 0) {
            if (r.error != null) {
                finishFailed(r, r.error);
            } else {
                finish(r, value);
            }
        }
    }

    private void finish(Request r, long value) {
        retire(r);
        counters.increment(Counter.COMPLETED);
        // The grant before the completion: a thread that waited for this request finds the fast
        // path open for its next operation instead of racing the actor to it.
        maybeGrant();
        r.succeed(value); // last: the user's callbacks run here and may reuse everything
        progressFlushes();
    }

    private void finishFailed(Request r, FencelineException e) {
        retire(r);
        counters.increment(Counter.FAILED);
        maybeGrant();
        r.fail(e);
        progressFlushes();
    }

    /** Bookkeeping before completion: unlink the request and release the flushes that waited for it. */
    private void retire(Request r) {
        outstanding.remove(r.seq);
        for (Request f : flushes) {
            if (f.flushStarted && f.seq > r.seq) {
                f.flushWaits--;
            }
        }
    }

    // ---------------------------------------------------------------- flush

    /**
     * Starts every flush that no longer waits for fence-queued requests issued before it, and
     * completes those whose lane flushes and earlier requests are all done. Later epochs never delay
     * an earlier flush: only requests with a smaller sequence number count. Nothing starts during a
     * replay; {@link ReplayDone} calls this again.
     */
    private void progressFlushes() {
        if (replaying) {
            return;
        }
        Iterator<Request> it = flushes.iterator();
        List<Request> done = null;
        while (it.hasNext()) {
            Request f = it.next();
            if (!f.flushStarted) {
                if (fenceQueue.any(q -> q.seq < f.seq)) {
                    break; // later flushes wait for the same queued work
                }
                startFlush(f);
            }
            if (f.flushWaits == 0 && channel.directAnsweredOrWake(f.directTarget)) {
                it.remove();
                if (done == null) {
                    done = new ArrayList<>(2);
                }
                done.add(f);
            }
        }
        if (done != null) {
            for (Request f : done) {
                counters.increment(Counter.FLUSHES);
                // Implicit operations before this flush are complete; the first one that failed
                // fails the flush (they have no completion of their own to fail).
                FencelineException implicit = channel.takeImplicitError(f.submissionNumber);
                FencelineException direct = channel.takeDirectError(f.directTarget);
                if (implicit == null) {
                    implicit = direct;
                }
                if (implicit != null) {
                    f.fail(implicit);
                } else {
                    f.succeed(0);
                }
            }
        }
    }

    private void startFlush(Request f) {
        f.flushStarted = true;
        f.directTarget = channel.directSent();
        int waits = 0;
        for (Request r : outstanding.values()) {
            if (r.seq < f.seq) {
                waits++;
            }
        }
        // A lane whose connection never carried anything has nothing to flush; an endpoint that
        // never sent anything completes a flush without touching a transport.
        f.flushWaits = waits + flushLanes(f, lanes.liveMask() & used);
    }

    /** @return how many lane flush completions will follow */
    private int flushLanes(Object owner, long mask) {
        int n = 0;
        for (int i = 0; i < lanes.size(); i++) {
            if ((mask & (1L << i)) != 0 && lanes.isLive(i) && postFlush(i, owner)) {
                n++;
            }
        }
        return n;
    }

    private Behavior<Command> onLaneFlushed(LaneFlushed m) {
        heard(m.lane(), m.connectionId());
        laneFlushed(m.token());
        maybeGrant();
        return Behaviors.same();
    }

    private void laneFlushed(long token) {
        FlushToken t = flushTokens.remove(token);
        if (t == null) {
            return; // dropped by a reconfiguration or a failed fence
        }
        if (t.owner() == FENCE_FLUSH) {
            if (--fenceFlushesOutstanding == 0) {
                onStrongFenceDone();
            }
        } else if (t.owner() == KEEPALIVE_PROBE) {
            if (current(t.lane(), t.connectionId())) {
                probeSent[t.lane()] = 0;
            }
        } else if (t.owner() instanceof Request f) {
            f.flushWaits--;
            progressFlushes();
        }
    }

    /**
     * Keepalive: a lane not heard from for an interval gets a probe (a remote flush); a probe
     * unanswered past the timeout is a lane failure, handled like one a transport reports.
     */
    private Behavior<Command> onKeepaliveTick() {
        long now = clock.getAsLong();
        // Answers to direct active messages come to the channel, not here: their arrival counts as
        // hearing from the lane that carries them (a probe may wait behind many of them).
        long answered = channel.directHeard();
        if (answered != lastDirectAnswered) {
            lastDirectAnswered = answered;
            if (directLane >= 0 && directLane < lanes.size()) {
                heard(directLane, directConnection);
            }
        }
        long interval = settings.keepaliveInterval().toNanos();
        long timeout = settings.keepaliveTimeout().toNanos();
        for (int i = 0; i < lanes.size(); i++) {
            if (!lanes.isLive(i)) {
                continue;
            }
            if (probeSent[i] != 0 && now - probeSent[i] > timeout && now - lastHeard[i] > timeout) {
                LaneConnection c = lanes.connection(i);
                return laneFailed(i, c.id(), new EndpointFailedException("keepalive: lane " + i + " ("
                        + c.transport() + ") did not answer a probe within " + settings.keepaliveTimeout()));
            }
            if (probeSent[i] == 0 && now - lastHeard[i] >= interval) {
                probeSent[i] = now;
                postFlush(i, KEEPALIVE_PROBE);
            }
        }
        return Behaviors.same();
    }

    private Behavior<Command> onLaneFlushFailed(LaneFlushFailed m) {
        FlushToken t = flushTokens.get(m.token());
        if (t == null) {
            return Behaviors.same();
        }
        if (settings.errorMode() == ErrorMode.FAILOVER && current(t.lane(), t.connectionId())
                && Long.bitCount(lanes.liveMask()) > 1) {
            // In failover mode a lane that cannot flush is a failed lane: restart on the others,
            // which re-issues this flush (or fence) over every live lane. The user sees nothing.
            return laneFailed(t.lane(), t.connectionId(), m.error());
        }
        flushTokens.remove(m.token());
        if (t.owner() == FENCE_FLUSH) {
            strongFenceFailed(m.error());
        } else if (t.owner() == KEEPALIVE_PROBE) {
            return laneFailed(t.lane(), t.connectionId(), m.error());
        } else if (t.owner() instanceof Request f) {
            flushTokens.values().removeIf(o -> o.owner() == f);
            flushes.remove(f);
            f.fail(m.error());
            progressFlushes();
        }
        return Behaviors.same();
    }

    /**
     * The in-flight strong fence failed: the epoch stays, the record stays (dirty), and every request
     * waiting behind the fence fails with the fence's error. The purge leaves the drain flag as it is,
     * so there is never more than one scheduled drain.
     */
    private void strongFenceFailed(FencelineException e) {
        log.debug("endpoint {}: strong fence to epoch {} failed: {}", channel.name(), fence.inFlightEpoch(),
                e.getMessage());
        flushTokens.values().removeIf(o -> o.owner() == FENCE_FLUSH);
        fenceFlushesOutstanding = 0;
        fenceRestartPending = false;
        fence = fence.strongFenceFailed();
        List<Request> queued = fenceQueue.removeAll();
        for (Request r : queued) {
            retire(r);
        }
        for (Request r : queued) {
            counters.increment(Counter.FAILED);
            r.fail(e);
        }
        progressFlushes();
    }

    // ---------------------------------------------------------------- reconfiguration

    private Behavior<Command> onLaneFailed(LaneFailed m) {
        return laneFailed(m.lane(), m.connectionId(), m.cause());
    }

    private Behavior<Command> laneFailed(int lane, long connectionId, Throwable cause) {
        LaneFailed m = new LaneFailed(lane, connectionId, cause);
        if (!current(m.lane(), m.connectionId())) {
            return Behaviors.same();
        }
        LaneConnection dead = lanes.connection(m.lane());
        LaneTable next = lanes.withFailed(m.lane());
        if (settings.errorMode() != ErrorMode.FAILOVER || next.liveMask() == 0) {
            EndpointFailedException e = new EndpointFailedException("endpoint " + channel.name() + " lost lane "
                    + m.lane() + " (" + dead.transport() + ")" + (next.liveMask() == 0 ? ", its last live lane" : "")
                    + ": " + m.cause(), m.cause());
            log.warn("{}", e.getMessage());
            setLanes(next);
            dead.close();
            return enterFailed(e);
        }
        log.info("endpoint {}: lane {} failed ({}); failing over to lanes {}", channel.name(), m.lane(), m.cause(),
                lanesOf(next.liveMask()));
        dead.abort(m.cause()); // still wanted: the transport may recover it
        givenUp[m.lane()] = dead;
        return reconfigure(next, 1L << m.lane());
    }

    private Behavior<Command> onLaneReplaced(LaneReplaced m) {
        if (!current(m.lane(), m.oldConnectionId())) {
            m.connection().close(); // the slot moved on already
            return Behaviors.same();
        }
        LaneConnection old = lanes.connection(m.lane());
        bind(m.lane(), m.connection());
        Behavior<Command> b = reconfigure(lanes.withSlot(m.lane(), m.connection()), 1L << m.lane());
        old.close();
        return b;
    }

    private Behavior<Command> onLaneRecovered(LaneRecovered m) {
        if (m.lane() < 0 || m.lane() >= lanes.size() || lanes.isLive(m.lane())) {
            m.connection().close(); // not a failed slot
            return Behaviors.same();
        }
        bind(m.lane(), m.connection());
        return reconfigure(lanes.withSlot(m.lane(), m.connection()), 1L << m.lane());
    }

    private Behavior<Command> onLaneAdded(LaneAdded m) {
        if (lanes.size() >= LaneTable.MAX_LANES) {
            m.connection().close();
            return Behaviors.same();
        }
        bind(lanes.size(), m.connection());
        return reconfigure(lanes.withAdded(m.connection()), 1L << lanes.size());
    }

    private Behavior<Command> onLanesChanged(LanesChanged m) {
        List<LaneConnection> c = m.connections();
        if (c.size() < lanes.size() || c.size() > LaneTable.MAX_LANES) {
            c.forEach(x -> {
                if (x != null && !isInstalled(x)) {
                    x.close();
                }
            });
            log.warn("endpoint {}: ignored a lane table of {} slots (has {}; slots are never removed)", channel.name(),
                    c.size(), lanes.size());
            return Behaviors.same();
        }
        LaneTable next = lanes;
        long changed = 0;
        java.util.Set<LaneConnection> staying = java.util.Collections.newSetFromMap(new java.util.IdentityHashMap<>());
        c.forEach(x -> {
            if (x != null) {
                staying.add(x);
            }
        });
        List<LaneConnection> retired = new ArrayList<>();
        for (int i = 0; i < c.size(); i++) {
            LaneConnection now = c.get(i);
            LaneConnection before = lanes.connection(i);
            if (i >= next.size()) {
                next = next.withAdded(now); // keep indices: an empty new slot is still a slot
            } else if (now == before) {
                continue;
            } else {
                next = next.withSlot(i, now);
            }
            if (now != null) {
                bind(i, now);
            }
            if (before != null && !staying.contains(before)) {
                retired.add(before); // only connections that leave the table are closed
            }
            changed |= 1L << i;
        }
        if (changed == 0) {
            return Behaviors.same();
        }
        if (next.liveMask() == 0) {
            setLanes(next);
            retired.forEach(LaneConnection::close);
            return enterFailed(new EndpointFailedException("endpoint " + channel.name() + " was given a lane table"
                    + " with no live lane"));
        }
        Behavior<Command> b = reconfigure(next, changed);
        retired.forEach(LaneConnection::close);
        return b;
    }

    private boolean isInstalled(LaneConnection x) {
        for (int i = 0; i < lanes.size(); i++) {
            if (lanes.connection(i) == x) {
                return true;
            }
        }
        return false;
    }

    /**
     * Applies a new lane table (DESIGN §3.5): update the fence record for every changed slot, then
     * replay. A request with a fragment on a changed slot is restarted on the current lanes with
     * its epoch, through the fence decision again; requests in the fence queue stay there; lane
     * flushes of changed slots are dropped and re-issued on every live lane after the replay. No
     * flush and no strong fence starts before {@link ReplayDone}.
     */
    private Behavior<Command> reconfigure(LaneTable next, long changed) {
        channel.revokeGrant(); // the lane table changes: nothing may act on the old one
        for (int i = 0; i < Math.max(lanes.size(), next.size()); i++) {
            if ((changed & (1L << i)) != 0) {
                fence = fence.slotChanged(i, lanes.connection(i) != null);
            }
        }
        setLanes(next);
        long now = clock.getAsLong();
        used &= ~changed;
        for (int i = 0; i < next.size(); i++) {
            if ((changed & (1L << i)) != 0) {
                lastHeard[i] = now;
                probeSent[i] = 0;
            }
        }
        counters.increment(Counter.RECONFIGURATIONS);
        replaying = true;

        // Fragments posted on, or parked for, a connection that is no longer in its slot.
        TreeMap<Long, Restart> restart = new TreeMap<>();
        List<Long> dropped = new ArrayList<>();
        org.agrona.collections.LongHashSet neverSent = new org.agrona.collections.LongHashSet();
        for (int i = 0; i < pending.length; i++) {
            if ((changed & (1L << i)) != 0) {
                for (Object o : pending[i]) {
                    if (o instanceof TransportOp op) {
                        neverSent.add(op.token()); // parked for NO_RESOURCE: the transport never had it
                    }
                }
                pending[i].clear();
            }
        }
        byToken.forEach((token, f) -> {
            if (!current(f.lane(), f.connectionId())) {
                dropped.add(token);
                if (f.request().done) {
                    return; // completed (or failed) already: nothing to restart
                }
                Restart x = restart.computeIfAbsent(f.request().seq, k -> new Restart(f.request(), new ArrayList<>()));
                x.fragments().add(f.fragment());
                x.unsafe |= !f.deduplicated() && !neverSent.contains(token);
            }
        });
        dropped.forEach(byToken::remove);
        // Lane flushes of changed slots never complete now.
        List<Long> deadFlushes = new ArrayList<>();
        flushTokens.forEach((token, t) -> {
            if (!current(t.lane(), t.connectionId())) {
                deadFlushes.add(token);
            }
        });
        for (Long token : deadFlushes) {
            FlushToken t = flushTokens.remove(token);
            if (t.owner() == FENCE_FLUSH) {
                fenceFlushesOutstanding--;
                fenceRestartPending = true;
            } else if (t.owner() == KEEPALIVE_PROBE) {
                continue; // the slot's probe state was reset above
            } else if (t.owner() instanceof Request f) {
                f.flushWaits--;
                f.reflush = true;
            }
        }
        // Replay in issue order, each through the fence decision with its own epoch.
        for (Restart x : restart.values()) {
            replay(x.request(), x.fragments(), x.unsafe);
        }
        ctx.getSelf().tell(ReplayDone.INSTANCE);
        return Behaviors.same();
    }

    /** A request to restart: the fragments to send again, and whether one went out without deduplication. */
    private static final class Restart {
        private final Request request;
        private final List<Integer> fragments;
        boolean unsafe;

        Restart(Request request, List<Integer> fragments) {
            this.request = request;
            this.fragments = fragments;
        }

        Request request() {
            return request;
        }

        List<Integer> fragments() {
            return fragments;
        }
    }

    private void replay(Request r, List<Integer> fragments, boolean sentWithoutDedup) {
        // Atomics and active messages are not idempotent: re-sending one that may have arrived on a
        // lane without deduplication could apply it twice. Puts and gets are re-sent.
        boolean notIdempotent = r.kind == Request.Kind.ATOMIC_POST || r.kind == Request.Kind.ATOMIC_FETCH
                || r.kind == Request.Kind.CSWAP || r.kind == Request.Kind.AM;
        int lane = pickLane(r.opClass(settings));
        if (notIdempotent && sentWithoutDedup) {
            retire(r);
            counters.increment(Counter.FAILED);
            r.fail(new dev.fenceline.OutcomeUnknownException(r.kind + String.format(" at 0x%x", r.remoteAddress)
                    + " was in flight on a lane without deduplication when it failed: it may or may not have been"
                    + " applied, and is not retried"));
            return;
        }
        if (lane < 0) {
            retire(r);
            counters.increment(Counter.FAILED);
            r.fail(new EndpointFailedException("endpoint " + channel.name() + " has no live lane for " + r.kind
                    + " after a reconfiguration; lanes: " + lanes.describe()));
            return;
        }
        counters.increment(Counter.RESTARTS);
        r.restarts++;
        r.lane = lane;
        r.resend = fragments.stream().mapToInt(Integer::intValue).sorted().toArray();
        r.posted = false;
        if (log.isDebugEnabled()) {
            log.debug("endpoint {}: restarting {} ({} fragments) on lane {}", channel.name(), r, r.resend.length, lane);
        }
        if (r.kind.fenced()) {
            admitOrQueue(r, false);
        } else {
            post(r); // active messages are ordered per lane, never fenced
        }
    }

    private Behavior<Command> onReplayDone() {
        replaying = false;
        if (fence.fenceInFlight() && fenceRestartPending) {
            // The restarted fence covers every live lane, and goes out after the restarted data.
            fenceRestartPending = false;
            long live = lanes.liveMask();
            fence = fence.strongFenceRestarted(live, fenceTarget);
            flushTokens.values().removeIf(o -> o.owner() == FENCE_FLUSH);
            log.debug("endpoint {}: strong fence to epoch {} restarted over lanes {}", channel.name(),
                    fence.inFlightEpoch(), lanesOf(live));
            issueFenceFlushes(live);
        }
        for (Request f : flushes) {
            if (f.flushStarted && f.reflush) {
                f.reflush = false;
                f.flushWaits += flushLanes(f, lanes.liveMask()); // every live lane, the replacement included
            }
        }
        scheduleFenceDrain();
        progressFlushes();
        maybeGrant();
        return Behaviors.same();
    }

    // ---------------------------------------------------------------- failure and close

    private Behavior<Command> enterFailed(EndpointFailedException e) {
        channel.revokeGrant();
        timers.cancelAll();
        channel.publishFailure(e);
        channel.terminate(e);
        failEverything(e);
        closeLanes();
        rejectSubmissions(() -> e);
        return failed(e);
    }

    private void closeLanes() {
        for (int i = 0; i < lanes.size(); i++) {
            if (lanes.connection(i) != null) {
                lanes.connection(i).close();
            }
            if (givenUp[i] != null) {
                givenUp[i].close(); // its transport may still be reconnecting it: stop that too
                givenUp[i] = null;
            }
        }
    }

    /** Completes every request the endpoint holds with {@code e}; bookkeeping first, completion last. */
    private void failEverything(FencelineException e) {
        List<Request> victims = new ArrayList<>(outstanding.values());
        victims.addAll(fenceQueue.removeAll());
        List<Request> flushVictims = new ArrayList<>(flushes);
        outstanding.clear();
        byToken.clear();
        flushTokens.clear();
        flushes.clear();
        for (ArrayDeque<Object> p : pending) {
            p.clear();
        }
        victims.sort((a, b) -> Long.compare(a.seq, b.seq));
        for (Request r : victims) {
            if (!r.done) {
                counters.increment(Counter.FAILED);
                r.fail(e);
            }
        }
        for (Request f : flushVictims) {
            f.fail(e);
        }
        channel.failDirectFlushes(e);
    }

    private Behavior<Command> onClose(Close m) {
        timers.cancelAll();
        channel.markClosing();
        if (log.isDebugEnabled()) {
            log.debug("endpoint {} closing: operations {}, completed {}, failed {}, flushes {}, strong fences {},"
                    + " weak fences {}, fast-forwards {}, fence-queued {} (max depth {})", channel.name(),
                    counters.get(Counter.OPERATIONS), counters.get(Counter.COMPLETED), counters.get(Counter.FAILED),
                    counters.get(Counter.FLUSHES), counters.get(Counter.STRONG_FENCES),
                    counters.get(Counter.WEAK_FENCES), counters.get(Counter.FAST_FORWARDS),
                    counters.get(Counter.FENCE_QUEUED), counters.get(Counter.MAX_FENCE_QUEUE_DEPTH));
        }
        // The facade queued a flush behind every earlier operation and sends Close when it completed,
        // so nothing accepted is outstanding here except what failed to flush.
        channel.revokeGrant();
        channel.terminate(new EndpointClosedException("endpoint " + channel.name() + " is closed"));
        failEverything(new EndpointClosedException("endpoint " + channel.name() + " was closed"));
        closeLanes();
        rejectSubmissions(() -> new EndpointClosedException("endpoint " + channel.name() + " is closed"));
        m.replyTo().tell(Done.getInstance());
        return closed();
    }

    private static String lanesOf(long mask) {
        StringBuilder sb = new StringBuilder("{");
        for (int i = 0; i < 64; i++) {
            if ((mask & (1L << i)) != 0) {
                sb.append(sb.length() > 1 ? "," : "").append(i);
            }
        }
        return sb.append('}').toString();
    }

}
