package dev.fenceline.transport.ucx;

import dev.fenceline.EndpointFailedException;
import dev.fenceline.affinity.CpuAffinity;
import dev.fenceline.spi.Wakeup;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.atomic.AtomicBoolean;
import org.agrona.DirectBuffer;
import org.agrona.concurrent.Agent;
import org.agrona.concurrent.ManyToOneConcurrentArrayQueue;

/**
 * The ucx transport's progress agent: the one thread at a time that touches the UCT worker (opened
 * in serialized mode: the agent's own thread, or a thread the runtime lent the agent to,
 * {@code Worker.progressHere()}) and everything on it. Each duty cycle it takes the commands other threads
 * queued (lanes' operations, the transport actor's decisions), progresses every iface, and reads
 * the events that progress gathered: completions, active messages (requests for {@link UcxTarget},
 * replies for the lanes, wireup for {@link UcxWiring}), room on an endpoint, a peer's failure.
 * Completions reach each endpoint in one batch per pass.
 *
 * <p>Where every iface has an event file descriptor, an idle agent sleeps on them ({@link Wakeup});
 * a command queued meanwhile wakes it.
 */
final class UcxAgent implements Agent, UctEventHandler, Wakeup, dev.fenceline.spi.FailStop {
    private static final org.slf4j.Logger LOG = org.slf4j.LoggerFactory.getLogger(UcxAgent.class);
    /** Commands taken per pass, so that progress is never starved. */
    private static final int COMMANDS_PER_PASS = 1024;
    /** How long a closing agent progresses UCT for the transfers it still holds. */
    private static final long CLOSE_COMPLETION_NANOS = java.util.concurrent.TimeUnit.SECONDS.toNanos(2);

    private final UctWorker worker;
    private final List<UctIface> ifaces;
    private final String workerName;
    private final ManyToOneConcurrentArrayQueue<UcxOp> operations;
    private final ConcurrentLinkedQueue<UcxCommand> control = new ConcurrentLinkedQueue<>();
    private final UcxSender sender;
    private final UcxTarget target;
    private final UcxDataPath data;
    private final UcxReplies replies;
    private final UcxWiring wiring;
    private final UcxEnds ends;
    private final List<UcxLane> touched = new ArrayList<>();
    private final UcxRoomWaits roomWaits = new UcxRoomWaits();
    private final AtomicBoolean sleeping = new AtomicBoolean();
    /** Keepalive probes of lanes to peers on this host, waiting for the peer's heartbeat to move. */
    private final UcxHeartbeats heartbeats = new UcxHeartbeats();
    private final boolean canSleep;
    /** Idle passes to spin before yielding and sleeping ({@link #spinsBeforeWait}). */
    private final int spins;
    private volatile boolean closed;
    private final UcxFailStop failStops;
    /** The thread that runs this agent (set as it starts), for sends made on it ({@link #takeHere}). */
    private volatile Thread thread;
    /**
     * The thread in {@link #doWork} now, else null: a thread the agent is lent to, whose handlers'
     * sends are made at once as on the own thread. Each thread reads only what it wrote itself, or a
     * value that is not itself.
     */
    private Thread runningOn;
    /** The CPUs its thread is kept to at start ({@code progress-cpus}); empty: none. */
    private final List<Integer> progressCpus;
    /** Accesses through a mapping of this many bytes and more take the native copy ({@code native-copy-from}). */
    final int nativeCopyFrom;
    /** {@link #take}, made once: a method reference written in {@link #doWork} was an object per pass. */
    private final java.util.function.Consumer<UcxOp> taker = this::take;
    /** {@link #touch}, made once, for the lanes that have room again. */
    private final java.util.function.Consumer<UcxLane> toucher = this::touch;

    UcxAgent(UctWorker worker, List<UctIface> ifaces, UcxSettings settings, UUID workerId, String workerName,
            byte[] localAddress, dev.fenceline.spi.RemoteAccessTarget memory,
            dev.fenceline.spi.support.ExactlyOnceWindows windows, UcxWiringReports reports) {
        this.worker = worker;
        this.ifaces = List.copyOf(ifaces);
        this.workerName = workerName;
        this.failStops = new UcxFailStop(workerName, reports::stopped);
        this.operations = new ManyToOneConcurrentArrayQueue<>(64 << 10);
        this.sender = new UcxSender((channel, why) -> channelFailed(channel, new EndpointFailedException("ucx: "
                + channel + " failed: " + why), false));
        long largest = 256;
        for (UctIface i : ifaces) {
            if (i.attributes().has(UctIfaceAttributes.AM_BCOPY)) {
                largest = Math.max(largest, Math.min(i.attributes().amMaxBcopy(), 1 << 20));
            }
        }
        int maxMessage = (int) largest;
        this.target = new UcxTarget(workerName, memory, windows, maxMessage, settings.maxFragment(),
                settings.assemblyTimeout().toNanos(), settings.answerHold().toNanos(),
                (ch, b, n) -> sender.send(ch, UcxWire.AM_REPLY, b, n));
        this.data = new UcxDataPath(this, sender, maxMessage);
        this.replies = new UcxReplies(data, this);
        this.wiring = new UcxWiring(this, sender, target, settings, workerId, workerName, ifaces, localAddress, reports);
        this.ends = new UcxEnds(workerName, wiring, this::closed);
        this.canSleep = worker.canWait();
        this.spins = settings.spinsFor(ifaces.stream().map(i -> i.resource().transport()).toList());
        this.progressCpus = settings.progressCpus();
        this.nativeCopyFrom = settings.nativeCopyFrom();
    }

    /** @return the wake-up to sleep on, or null where some iface has no event file descriptor */
    Wakeup wakeup() {
        return canSleep ? this : null;
    }

    int ifaceCount() {
        return ifaces.size();
    }

    // ------------------------------------------------------------------ other threads

    /**
     * Queues a lane's operation (the endpoint actor's thread).
     *
     * @return false if the queue is full
     */
    boolean submit(UcxOp op) {
        if (closed || !operations.offer(op)) {
            return false;
        }
        wakeIfSleeping();
        return true;
    }

    /** @return whether the calling thread is this agent's, or runs its duty cycle now (a borrower) */
    boolean isAgentThread() {
        Thread t = Thread.currentThread();
        return t == thread || t == runningOn;
    }

    /**
     * Takes a lane's operation at once, without the queue, when called on the agent's own thread (an
     * active-message handler that answers with a message) and nothing is queued that could be ahead of
     * it: the queue is first in, first out, so an empty one holds nothing sent before.
     *
     * @return false if the caller must {@link #submit} it instead
     */
    boolean takeHere(UcxOp op) {
        if (!isAgentThread() || closed || !operations.isEmpty()) {
            return false;
        }
        take(op);
        return true;
    }

    /** @return whether the operations queue has room now (any thread; a hint) */
    boolean hasRoom() {
        return operations.remainingCapacity() > 0;
    }

    /** Queues a decision (never refused). */
    void submitControl(UcxCommand c) {
        if (failStops.stopped()) {
            return; // stopped for good: nothing takes it, and the actor's ticks would pile up
        }
        control.add(c);
        wakeIfSleeping();
    }

    /** A lane's endpoint waits for room (any thread). */
    void wantsRoom(UcxLane lane) {
        roomWaits.want(lane);
    }

    private void wakeIfSleeping() {
        if (sleeping.get()) {
            worker.wake();
        }
    }

    /**
     * On a thread of its own the agent keeps a held answer's deadline, polling (each pass releases
     * what is due) or sleeping here (no longer than the deadline); a shared thread's idle strategy
     * would park past it. So only such an agent holds answers.
     */
    @Override
    public void ownThread() {
        target.answers().holdFromNowOn();
    }

    @Override
    public void await(long timeoutNanos) {
        sleeping.set(true);
        try {
            if (!operations.isEmpty() || !control.isEmpty() || closed) {
                return; // queued before the flag was up: the producer saw no sleeper
            }
            // Held answers go at their deadline, not when something wakes the agent.
            long due = target.answers().deadline();
            worker.await(due == Long.MAX_VALUE ? timeoutNanos
                    : Math.max(0, Math.min(timeoutNanos, due - System.nanoTime())));
        } finally {
            sleeping.set(false);
        }
    }

    @Override
    public void wake() {
        worker.wake();
    }

    /** As {@code spin-passes} says ({@link UcxSettings#spinsFor}). */
    @Override
    public int spinsBeforeWait() {
        return spins;
    }

    // ------------------------------------------------------------------ the duty cycle

    @Override
    public void onStart() {
        thread = Thread.currentThread();
        CpuAffinity.keepThisThreadTo(progressCpus, "ucx " + workerName + ": the progress thread");
    }

    @Override
    public String roleName() {
        return "fenceline-ucx-" + workerName;
    }

    @Override
    public int doWork() {
        runningOn = Thread.currentThread();
        try {
            return duty();
        } finally {
            runningOn = null;
        }
    }

    private int duty() {
        int work = drainControl();
        work += operations.drain(taker, COMMANDS_PER_PASS);
        work += worker.progress();
        work += worker.drain(this);
        // Before the lanes UCT has room for again post more: else, under load, the flushes that
        // answer puts on an adapter would lose every race for the room their answers free.
        data.flushAwaiting();
        if (sender.anyBlocked()) {
            for (UcxChannel c : sender.retry()) {
                for (UcxLane l : List.copyOf(c.lanes)) {
                    data.advance(l);
                }
            }
        }
        roomWaits.serve(toucher); // a lane with room again: its end of pass says so
        if (!heartbeats.isEmpty()) {
            heartbeats.answer();
        }
        data.flushAwaiting();
        reportTouched();
        if (target.answers().anyHeld()) {
            target.answers().releaseDue(System.nanoTime());
        }
        return work;
    }

    /** Each lane touched in this pass reports its completions, in one batch. */
    private void reportTouched() {
        if (!touched.isEmpty()) { // by index: an iterator per pass was most of what an idle agent allocated
            for (int i = 0; i < touched.size(); i++) {
                UcxLane l = touched.get(i);
                l.touched = false;
                l.endOfPass();
            }
            touched.clear();
        }
    }

    private int drainControl() {
        int n = 0;
        for (UcxCommand c; (c = control.poll()) != null; n++) {
            if (c instanceof UcxCommand.Dial d) {
                wiring.dial(d);
            } else if (c instanceof UcxCommand.Abandon a) {
                wiring.abandon(a.dial());
            } else if (c == UcxCommand.Tick.TICK) {
                wiring.tick();
            } else if (c instanceof UcxCommand.PeerGone g) {
                ends.peerGone(g.peer());
            } else if (c instanceof UcxCommand.LaneEnded e) {
                ends.laneEnded(e.lane());
            } else if (c instanceof UcxCommand.BreakChannel b) {
                channelFailed(b.lane().channel, b.cause(), false);
            } else if (c instanceof UcxCommand.LaneOverflowed o) {
                o.lane().fail(o.cause());
            } else if (c instanceof UcxCommand.Replace r) {
                wiring.replace(r.lane());
            } else if (c instanceof UcxCommand.HeartbeatProbe h) {
                heartbeats.add(h);
            }
        }
        return n;
    }

    private void take(UcxOp op) {
        UcxLane lane = op.lane;
        if (lane.channel.state == UcxChannel.State.FAILED) {
            return; // the lane failed: the revocation withdraws what was never taken
        }
        lane.traffic.waiting.add(op);
        if (lane.traffic.waiting.size() == 1) {
            data.advance(lane);
        }
    }

    /** A lane has completions to report at the end of this pass. */
    void touch(UcxLane lane) {
        if (!lane.touched) {
            lane.touched = true;
            touched.add(lane);
        }
    }

    /** A lane got an answer: a lane its endpoint is done with is forgotten once it owes none. */
    void answered(UcxLane lane) {
        touch(lane);
        ends.answered(lane);
    }

    // ------------------------------------------------------------------ events

    @Override
    public void completed(long token, int status, long value) {
        data.completed(token, status, value);
    }

    @Override
    public void activeMessage(long iface, int id, DirectBuffer buffer, int offset, int length) {
        switch (id) {
            case UcxWire.AM_REQUEST -> target.onRequest(buffer, offset, length);
            case UcxWire.AM_SHORT_MESSAGE -> target.onShortMessage(buffer, offset, length);
            case UcxWire.AM_REPLY -> replies.message(wiring.lanes, buffer, offset, length);
            case UcxWire.AM_WIREUP -> wiring.onWireup(iface, buffer, offset, length);
            default -> LOG.debug("ucx {}: dropped an active message of unknown id {}", workerName, id);
        }
    }

    @Override
    public void ready(long token) {
        UcxChannel ch = wiring.channel(token);
        if (ch != null) {
            sender.ready(ch);
        }
    }

    @Override
    public void endpointFailed(long endpoint, int status) {
        UcxChannel ch = wiring.channel(endpoint);
        if (ch != null) {
            ch.uctFailed = true;
            channelFailed(ch, new EndpointFailedException("ucx: UCT reported the peer of " + ch + " failed: "
                    + UctStatus.describe(status)), false);
        }
    }

    // ------------------------------------------------------------------ failures and ends

    /** As {@link UcxEnds#channelFailed}. */
    void channelFailed(UcxChannel ch, Throwable cause, boolean peerDead) {
        ends.channelFailed(ch, cause, peerDead);
    }

    /** As {@link UcxEnds#peerLeft}. */
    void peerLeft(UcxPeer p) {
        ends.peerLeft(p);
    }

    /** As {@link UcxEnds#peerContradicted}. */
    void peerContradicted(UcxPeer p, EndpointFailedException why) {
        ends.peerContradicted(p, why);
    }

    /** On the agent's thread as the runtime stops it: lanes fail, unpacked keys and endpoints go. */
    @Override
    public void onClose() {
        closed = true;
        try {
            target.answers().releaseAll(); // their handlers ran: the peers hear so before this worker leaves
            wiring.leaving(); // before the channels go: the peers' lanes fail now, not at a timeout
        } catch (RuntimeException e) { // best effort: what follows must run whatever it met
            LOG.warn("ucx {}: telling the peers this worker closes: {}", workerName, e.toString());
        }
        EndpointFailedException why = new EndpointFailedException("ucx: worker '" + workerName
                + "' closed its transport");
        for (UcxChannel c : wiring.allChannels()) {
            channelFailed(c, why, false);
        }
        completeHardware();
        for (UcxLane l : List.copyOf(wiring.lanes.values())) {
            l.abandonHeld(why); // no progress from now on: what is still held gets no answer
        }
        for (UcxPeer p : wiring.allPeers()) {
            wiring.forgetPeer(p);
        }
        data.releaseKeys();
    }

    /**
     * Progresses UCT, for a bounded time, until the transfers it holds complete, so that the
     * ifaces close with no transfer naming an endpoint (and the endpoints kept for them go).
     */
    private void completeHardware() {
        int left = data.completeHardware(worker, CLOSE_COMPLETION_NANOS);
        reportTouched();
        if (left > 0) {
            LOG.warn("ucx {}: closed with {} hardware operation(s) UCT did not complete within {} ms", workerName,
                    left, CLOSE_COMPLETION_NANOS / 1_000_000);
        }
    }

    /** Its loop threw an Error (agent thread): the transport stops ({@link UcxFailStop}). */
    @Override
    public void failStop(Error cause) {
        closed = true; // no operation is taken from now on
        failStops.stop(this, wiring, cause);
    }

    /** @return why the transport stopped ({@link #failStop}), or null (any thread) */
    EndpointFailedException stoppedBecause() {
        return failStops.failure();
    }

    /** Whether the agent was stopped: the transport closes what it opened. */
    boolean closed() {
        return closed;
    }
}
