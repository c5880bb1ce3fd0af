package dev.fenceline.transport.ucx;

import dev.fenceline.FencelineException;
import dev.fenceline.LaneType;
import dev.fenceline.AtomicOp;
import dev.fenceline.RemoteKey;
import dev.fenceline.spi.DirectAccess;
import dev.fenceline.spi.LaneCapabilities;
import dev.fenceline.spi.LaneListener;
import dev.fenceline.spi.PostStatus;
import dev.fenceline.spi.Revocation;
import dev.fenceline.spi.TransportOp;
import dev.fenceline.spi.support.AbstractLane;
import dev.fenceline.spi.support.ReconnectPolicy;
import java.nio.ByteBuffer;
import java.util.Set;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * One lane of an endpoint over UCT: a connection id on a channel (a UCT endpoint to the peer worker
 * on one iface, shared by every lane of this worker to that peer on it). The endpoint actor posts
 * here; the operations go to the transport's progress agent, the only thread that touches UCT, in
 * post order, and their answers come back in batches.
 *
 * <p>The agent sends each operation through the iface's hardware where it can (a UCT shared-memory
 * store or atomic, a cross-memory-attach copy: done when the call returns, after the region's slot
 * in its owner's key table was checked), else as a software request the target applies and answers
 * (puts and gets of memory the iface cannot reach, atomics it does not do, active messages). Within a
 * lane it never lets one overtake the other: hardware operations wait while software requests are
 * unanswered, and the other way round, so the lane applies everything in post order.
 *
 * <p>Every operation's state changes under {@link #ledger}, so when the endpoint gives the lane up its
 * revocation is exact: an operation the agent had not taken is withdrawn and never sent; one done
 * through the hardware was answered, or will be; a software request already sent may still be
 * applied by a live peer (its target's exactly-once window, shared by every ucx lane to that peer,
 * recognizes a copy sent again) and will not be by a dead one.
 */
final class UcxLane extends AbstractLane implements DirectAccess, dev.fenceline.spi.DirectPosting,
        UcxRecovery.Recoverable {
    final long conn;
    final UcxChannel channel;
    private final UcxAgent agent;
    private final Set<LaneType> types;
    /** As planned, then bounded by the target's answer ({@link #limitGets}) before the endpoint has the lane. */
    private volatile LaneCapabilities capabilities;
    /** The largest active message (header and payload): max-fragment where the lane carries messages. */
    private final int maxMessage;
    private final int queueDepth;
    private final Object scope;

    /**
     * The operations' record, and the lock that guards their states, the lane's end and its
     * revocation (endpoint actor, calling threads and agent).
     */
    final UcxLaneLedger ledger = new UcxLaneLedger();

    /** Tokens of active messages sent on the fast path: the sign bit, then the endpoint's index. */
    static final long DIRECT = Long.MIN_VALUE;

    /**
     * Tokens of operations calling threads posted ({@link #postNow}): bit 62, then the lane's count
     * (the endpoint actor's tokens stay far below it, and direct messages have the sign bit).
     */
    static final long POSTED = 1L << 62;
    /** The transport's {@code direct-operations} setting. */
    private final boolean directOperations;

    /** Data operations queued or unanswered: the lane's flow control. */
    private final AtomicInteger unanswered = new AtomicInteger();
    /** What the ledger does for each operation it forgets as answered or given back: its place is free. */
    private final Runnable freed = unanswered::decrementAndGet;
    /** Calling threads' stores, loads and atomics through the peer's mapped memory. */
    private final UcxMappedAccess mapped;
    /** The endpoint actor's and calling threads' ways onto the lane. */
    final UcxLanePosting posting;
    /** The endpoint waits for room (it got NO_RESOURCE). */
    private volatile boolean wantReady;
    /** The lane's peer process is gone (set by the agent before it fails the lane). */
    volatile boolean peerDead;
    /** Its process is gone, not only its worker (set by the agent before it fails the lane). */
    volatile boolean processGone;
    /** The lane's channel failed: nothing more is sent on it (UCT still completes what the hardware has). */
    volatile boolean channelFailed;

    /** Its operations on their way through the progress agent (agent only). */
    final UcxLaneTraffic traffic = new UcxLaneTraffic(this);
    // Progress agent only.
    /** Whether the agent has it on its list of lanes to report after this pass. */
    boolean touched;
    /** Whether the agent forgets it once no answer is owed (the endpoint is done with it). */
    boolean forgetWhenAnswered;
    /** Agent: when it came up (for the reconnect policy's stable-after). */
    private long upSince = System.nanoTime();
    /** Agent: the reconnect series that brought it up, or null. */
    private ReconnectPolicy.Backoff lastBackoff;
    /** The endpoint gave it up while failing over, and would take it back ({@link #abort}). */
    private volatile boolean recoveryWanted;
    /** The endpoint closed it: no reconnect. */
    private volatile boolean closedByEndpoint;

    /** Lanes of this JVM by connection id (the endpoint's LaneInfo names it), for tests and tools. */
    private static final java.util.Map<Long, UcxLane> LIVE = new java.util.concurrent.ConcurrentHashMap<>();

    /**
     * @param connectionId a lane's connection id
     * @return the lane, while its transport knows it; else null
     */
    static UcxLane byId(long connectionId) {
        return LIVE.get(connectionId);
    }

    /** The transport forgot the lane. */
    void forgotten() {
        LIVE.remove(id(), this);
    }

    UcxLane(UcxAgent agent, long conn, UcxChannel channel, Set<LaneType> types, LaneCapabilities capabilities,
            int maxMessage, int queueDepth, Object scope, boolean directOperations) {
        super(UcxTransportProvider.NAME);
        LIVE.put(id(), this);
        this.agent = agent;
        this.conn = conn;
        this.channel = channel;
        boolean memoryLane = channel.iface.resource().deviceType().equals("shm");
        this.types = types;
        this.capabilities = capabilities;
        this.maxMessage = maxMessage;
        this.queueDepth = queueDepth;
        this.scope = scope;
        this.directOperations = directOperations;
        UctIfaceAttributes a = channel.iface.attributes();
        // Every operation on such a lane is a software request (the iface's hardware reaches no
        // memory a key guards), so a copy given back and sent again is recognized at the target.
        boolean postsDirectly = directOperations && scope != null && !memoryLane && !a.keyedMemory()
                && a.has(UctIfaceAttributes.AM_BCOPY);
        this.mapped = new UcxMappedAccess(this, agent, memoryLane, unanswered);
        this.posting = new UcxLanePosting(this, agent, unanswered, freed, queueDepth, postsDirectly);
    }

    @Override
    public Set<LaneType> types() {
        return types;
    }

    @Override
    public int maxFragment() {
        return capabilities.maxPayload();
    }

    /** Messages larger than one UCT message go in parts ({@link UcxWire#PART}), up to max-fragment. */
    @Override
    protected int maxMessage() {
        return maxMessage;
    }

    @Override
    public LaneCapabilities capabilities() {
        return capabilities;
    }

    @Override
    public boolean deduplicates() {
        return capabilities.deduplicates();
    }

    /**
     * Every ucx lane to one peer reaches the same exactly-once windows at its target, where
     * software requests are applied; null for a lane whose hardware path may leave an operation in
     * flight when the lane fails (RDMA), which no window would recognize if sent again.
     */
    @Override
    public Object exactlyOnceScope() {
        return scope;
    }

    /** A failure found before the endpoint bound the lane is reported at bind (AbstractLane). */
    @Override
    public void bind(LaneListener l) {
        listen(l);
    }

    /** Answers gathered for operations decided as owed (held, or answered before the revocation). */
    @Override
    protected boolean answersAfterEnd() {
        return true;
    }

    // ------------------------------------------------------------------ endpoint actor

    @Override
    public PostStatus post(TransportOp op) {
        return posting.post(op);
    }

    @Override
    public PostStatus flush(long token) {
        return posting.flush(token);
    }

    /** A heartbeat probe to a peer on this host, else a software flush (where the lane carries messages). */
    @Override
    public PostStatus keepalive(long token) {
        return posting.keepalive(token);
    }

    /**
     * The agent hands operations to UCT in post order and never lets one path overtake the other;
     * where UCT's completions are not in place (RDMA), the operation posted next also waits behind
     * a UCT fence.
     */
    @Override
    public void fence() {
        posting.fenceNext();
    }

    @Override
    public void close() {
        closedByEndpoint = true; // stops a reconnect under way, too
        giveUp();
    }

    /**
     * Has the transport put a new connection behind this lane's slot (any thread): a new channel
     * and connection id, then {@code onReplaced}. Tests use it; it is what rebuilding a connection is.
     */
    void replace() {
        agent.submitControl(new UcxCommand.Replace(this));
    }

    /**
     * @param conn the new connection id
     * @param on the new channel
     * @return a lane like this one on another connection
     */
    UcxLane successor(long conn, UcxChannel on) {
        return new UcxLane(agent, conn, on, types, capabilities, maxMessage, queueDepth, scope, directOperations);
    }

    /**
     * The target said the largest get it answers on this lane in one reply (its CONNECTED): a lane
     * whose gets may go as messages splits them, and its puts, at that (agent thread, before the
     * endpoint has the lane), so that a target configured with smaller UCT messages answers every
     * fragment rather than refusing the get.
     *
     * @param maxGet bytes
     */
    void limitGets(int maxGet) {
        LaneCapabilities c = capabilities;
        if (carriesMessages() && c.maxBcopy() > maxGet) {
            capabilities = new LaneCapabilities(Math.min(c.maxShort(), maxGet), Math.max(1, maxGet), c.maxZcopy(),
                    c.zcopyNeedsRegisteredLocal(), c.hardwareAtomics32(), c.hardwareAtomics64(),
                    c.hardwareCompareAndSwap(), c.flushMeansVisible(), c.deduplicates());
        }
    }

    /** @return the smallest put or get through a mapping that the native copy takes ({@code native-copy-from}) */
    int nativeCopyFrom() {
        return mapped.nativeFrom();
    }

    /** @return whether its operations may go as messages: its iface carries copied active messages */
    boolean carriesMessages() {
        return channel.iface.attributes().has(UctIfaceAttributes.AM_BCOPY);
    }

    /** The replacement is up: the endpoint binds it (agent thread). */
    void replacedBy(UcxLane next) {
        LaneListener l = listener();
        if (l != null && live()) {
            l.onReplaced(next);
        } else {
            next.close(); // nobody took this one over: the new one goes too
        }
    }

    /**
     * A calling thread, holding the ledger's lock: a posted operation it numbered was refused by the
     * agent's queue (other lanes filled it since the look). The lane fails now, before anything
     * else is numbered on it, so nothing posted after that operation goes ahead of it; what it had
     * posted is given back, and the agent reports the failure, after which the endpoint takes them
     * back and sends them again elsewhere or once the lane is reconnected. Were they only given back,
     * nothing would take them back from a live lane, and their callers and flushes would wait for ever.
     *
     * @param cause the failure to report
     */
    void overflowed(Throwable cause) {
        if (markFailed()) {
            overflowed = true; // fail() reports it although the mark is taken
        }
        ledger.returnPosted(freed);
        agent.submitControl(new UcxCommand.LaneOverflowed(this, cause)); // never refused
    }

    /** Set once a calling thread marked the lane failed for {@link #overflowed}: fail() still reports it. */
    private volatile boolean overflowed;

    /**
     * Breaks the lane's channel as UCT would report its peer failed (fault injection; any thread):
     * every lane on the channel fails.
     *
     * @param cause the failure to report
     */
    void breakChannel(Throwable cause) {
        agent.submitControl(new UcxCommand.BreakChannel(this, cause));
    }

    /**
     * Given up as failed while the endpoint fails over: like a close, but the endpoint still wants
     * the slot, so the transport reconnects it ({@link UcxRecovery}) until the endpoint closes it.
     * What becomes of its operations is {@link #revoke()}'s to say.
     */
    @Override
    public void abort(Throwable cause) {
        recoveryWanted = true;
        giveUp();
    }

    @Override
    public boolean wantsRecovery() {
        return recoveryWanted && !closedByEndpoint;
    }

    @Override
    public boolean peerGone() {
        return channel.peer.dead;
    }

    @Override
    public ReconnectPolicy.Backoff lastBackoff() {
        return lastBackoff;
    }

    @Override
    public long upSince() {
        return upSince;
    }

    @Override
    public void upAgain(ReconnectPolicy.Backoff series, long now) {
        lastBackoff = series;
        upSince = now;
    }

    /**
     * A reconnect of this lane came up (agent thread): the endpoint binds it in this lane's slot,
     * unless it closed this one meanwhile.
     *
     * @param next the new lane
     */
    void recoveredBy(UcxLane next) {
        LaneListener l = listener();
        if (l != null && wantsRecovery()) {
            l.onRecovered(next);
        } else {
            next.close();
        }
    }

    private void giveUp() {
        if (end(Phase.CLOSED) != Phase.CLOSED) {
            synchronized (ledger) {
                ledger.end(); // the agent sends nothing more of it
                ledger.returnPosted(freed);
            }
            agent.submitControl(new UcxCommand.LaneEnded(this));
        }
    }

    @Override
    public Revocation revoke() {
        boolean dead;
        UcxLaneLedger.Fates fates;
        synchronized (ledger) {
            // Read under the lock: the agent marks itself closed before it sweeps held answers under
            // it. Read before, a close landing in between would find nothing revoked to sweep, and
            // this would then hold answers that never come.
            dead = peerDead;
            // A transfer UCT still holds stops only with the peer's process (a closed worker's process
            // still takes a cma copy).
            fates = ledger.revoke(dead, channelFailed && processGone, agent.closed());
        }
        ledger.reportRevoked(fates, this, dead);
        return fates;
    }

    // For UcxLanePosting and UcxMappedAccess: AbstractLane's own are protected.

    /** The endpoint waits for room: told once there is some ({@link #endOfPass}). */
    void needRoom() {
        wantReady = true;
        agent.wantsRoom(this);
    }

    /** @return whether it carries operations ({@link #live()}) */
    boolean isLive() {
        return live();
    }

    /** {@link #checkedPayload}: throws if the operation exceeds the lane's limit. */
    void checked(TransportOp op) {
        checkedPayload(op);
    }

    // ------------------------------------------------------------------ calling threads

    @Override
    public boolean putNow(RemoteKey key, long address, ByteBuffer src) {
        return mapped.putNow(key, address, src);
    }

    @Override
    public boolean getNow(RemoteKey key, long address, ByteBuffer dst) {
        return mapped.getNow(key, address, dst);
    }

    @Override
    public boolean atomicPostNow(RemoteKey key, long address, AtomicOp op, int width, long operand) {
        return mapped.atomicPostNow(key, address, op, width, operand);
    }

    @Override
    public Long atomicFetchNow(RemoteKey key, long address, AtomicOp op, int width, long operand, long compare) {
        return mapped.atomicFetchNow(key, address, op, width, operand, compare);
    }

    @Override
    public boolean activeMessageNow(int id, ByteBuffer header, ByteBuffer payload, long origin,
            dev.fenceline.spi.DirectAnswers a) {
        checkPayload(TransportOp.Kind.AM, header.remaining() + payload.remaining());
        return posting.activeMessageNow(id, header, payload, origin, a);
    }

    /** @return whether the target may hold back the answer to an unanswered direct message (any thread) */
    boolean directAnswersMayWait() {
        synchronized (ledger) {
            return ledger.directAnswersMayWait();
        }
    }

    @Override
    public boolean answersWanted() {
        return posting.answersWanted();
    }

    @Override
    public boolean postsDirectly() {
        return posting.postsDirectly;
    }

    @Override
    public boolean postNow(dev.fenceline.spi.PostedOperation p) {
        return posting.postNow(p);
    }

    // ------------------------------------------------------------------ progress agent

    /**
     * An operation is answered (the caller holds {@link #ledger}): whether the endpoint still wants the
     * answer.
     *
     * @param token the operation
     * @return the operation if its answer is to be delivered, else null
     */
    UcxOp answeredLocked(long token) {
        return ledger.answered(token, freed);
    }

    /** Delivers a completion gathered by {@link #answeredLocked} (agent thread). */
    void deliverCompleted(long token, long value) {
        completed(token, value);
        agent.touch(this);
    }

    /** Delivers a failure (agent thread): the completions gathered before it go first. */
    void deliverFailed(long token, FencelineException error) {
        reportCompletions();
        LaneListener l = listener();
        if (l != null) {
            l.onFailed(token, error);
        }
    }

    /** @return whether its heartbeat probes still want an answer (it is live) */
    boolean heartbeatWanted() {
        return live();
    }

    /** A heartbeat probe is answered (agent thread): the peer's process runs. */
    void heartbeatAnswered(long token) {
        LaneListener l = listener();
        if (l != null && live()) {
            l.onFlushed(token);
        }
    }

    /** A flush or keepalive probe is answered (agent thread). */
    void deliverFlushed(long token) {
        reportCompletions();
        LaneListener l = listener();
        if (l != null && live()) {
            l.onFlushed(token);
        }
    }

    /** Reports the completions gathered in this pass, and room if the endpoint waits for it. */
    void endOfPass() {
        reportCompletions();
        if (wantReady && unanswered.get() <= queueDepth / 2) {
            wantReady = false;
            LaneListener l = listener();
            if (l != null && live()) {
                l.onReady();
            }
        }
    }

    /** @return whether the endpoint waits for room and there is some now */
    boolean roomAgain() {
        return wantReady && unanswered.get() <= queueDepth / 2;
    }

    /** @return whether answers are still owed to the endpoint (held ones) */
    boolean owesAnswers() {
        synchronized (ledger) {
            return ledger.owesAnswers();
        }
    }

    /**
     * The lane's channel failed, or its peer went (agent thread): a live lane reports it once; what
     * it had in flight is the revocation's to say, and what the hardware has, UCT's completions.
     */
    void fail(Throwable cause) {
        reportCompletions(); // what completed before the failure did complete
        if (markFailed() || overflowed) {
            synchronized (ledger) {
                ledger.returnPosted(freed); // after the mark: no caller posts here any more
            }
            reportFailed(cause); // once, whoever asks first
        }
    }

    /**
     * The agent closed (agent thread, after its last progress): held answers will not come. The
     * endpoint learns that the lane is dead (it was told once already); each held operation is
     * failed as unknown, since UCT may have carried it out.
     */
    void abandonHeld(Throwable cause) {
        synchronized (ledger) {
            ledger.abandonHeld(token -> {
                LaneListener l = listener();
                if (l != null) {
                    l.onFailed(token, new dev.fenceline.OutcomeUnknownException("ucx: " + this + " closed before"
                            + " the hardware completed operation " + token + ": " + cause));
                }
            });
        }
    }

    @Override
    public String toString() {
        return "ucx lane " + Long.toHexString(conn) + " on " + channel.iface + " to " + channel.peer;
    }
}
