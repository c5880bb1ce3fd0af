package dev.fenceline.transport.shm;

import dev.fenceline.AtomicOp;
import dev.fenceline.FencelineException;
import dev.fenceline.spi.RemoteAccessTarget;
import dev.fenceline.spi.TransportContext;
import dev.fenceline.spi.support.DedupWindow;
import dev.fenceline.spi.support.ExactlyOnce;
import dev.fenceline.spi.support.ExactlyOnceWindows;
import dev.fenceline.spi.support.WireCodes;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.function.Consumer;
import java.util.function.Function;
import org.agrona.collections.Long2ObjectHashMap;
import org.agrona.collections.LongArrayList;
import org.agrona.concurrent.AtomicBuffer;
import org.agrona.concurrent.UnsafeBuffer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The target side of one worker's shm transport, on its polling thread only: the connections peers
 * opened to this worker (CONNECT, BYE), their requests checked, applied to this worker's memory at
 * most once per origin endpoint and answered in order into each origin's inbox (or its backlog when
 * that ring is full), and what a gone peer leaves behind. Every byte it reads was written by another
 * process and is checked before use.
 */
final class ShmTarget {
    private static final Logger LOG = LoggerFactory.getLogger(ShmTarget.class);

    /**
     * A peer's connection to this worker: where to answer, and the gate in its control segment that
     * says whether it still wants each record applied.
     *
     * @param inbox the origin's control segment
     * @param gate its gate slot there
     * @param worker the origin worker
     */
    private record Origin(Inbox inbox, int gate, java.util.UUID worker) {
    }

    /** A GET_DATA's fields before its data: conn and token. */
    private static final int GET_DATA_HEADER = 16;
    private final TransportContext context;
    private final ShmSettings settings;
    private final Function<String, Inbox> mapInbox;
    private final java.util.function.UnaryOperator<Inbox> adopt;
    private final Consumer<Inbox> discard;
    private final Consumer<String> dropped;
    private final ExactlyOnceWindows windows;
    private final ExactlyOnce exactlyOnce;
    /** Who to answer, by connection id (looked up per request: primitive keys, nothing boxed). */
    private final Long2ObjectHashMap<Origin> origins = new Long2ObjectHashMap<>();
    /** The window of the origin endpoint each connection carries, once it sent something (retained). */
    private final Long2ObjectHashMap<ExactlyOnceWindows.Window> connWindows = new Long2ObjectHashMap<>();
    private final ShmReplies replies;

    /**
     * @param mapInbox maps a peer's control segment by name: the one kept, or a new mapping
     * @param adopt keeps a new mapping (the transport polls and watches it), returning the one kept
     *     (a new mapping not kept is discarded)
     * @param discard lets go of a mapping {@code mapInbox} gave, unless it is the one kept
     * @param dropped told of each malformed message dropped, in words
     */
    ShmTarget(TransportContext context, ShmSettings settings, Function<String, Inbox> mapInbox,
            java.util.function.UnaryOperator<Inbox> adopt, Consumer<Inbox> discard, Consumer<String> dropped) {
        this.context = context;
        this.settings = settings;
        this.mapInbox = mapInbox;
        this.adopt = adopt;
        this.discard = discard;
        this.dropped = dropped;
        this.windows = context.windows();
        this.exactlyOnce = windows.exactlyOnce();
        this.replies = new ShmReplies(settings.maxBacklog(), dropped);
    }

    /** The peer closed a connection to this worker (after revoking its gate: else the BYE is not its own). */
    void onBye(long conn) {
        Origin o = origins.get(conn);
        if (o != null && o.inbox().gates.openFor(o.gate(), conn)) {
            dropped.accept("a BYE for connection " + Long.toHexString(conn) + " of " + o.inbox().name
                    + ", whose gate is still open for it");
            return;
        }
        if (o != null) {
            origins.remove(conn);
            o.inbox().incoming--;
        }
        forgetConnection(conn);
    }

    /**
     * Polling thread, at housekeeping: a connection whose origin revoked its gate is forgotten, as
     * its BYE would have it forgotten. The BYE is not sent when the origin finds this worker's ring
     * full (a stalled target being given up), and the connection would hold its window and count
     * against the origin's lanes here for good.
     *
     * @return how many were forgotten
     */
    int forgetRevoked() {
        int n = 0;
        for (Long2ObjectHashMap<Origin>.EntryIterator it = origins.entrySet().iterator(); it.hasNext();) {
            it.next();
            long conn = it.getLongKey();
            Origin o = it.getValue();
            // Not while its answers wait for room in the origin's inbox: if they are dropped, its
            // connections are RESET, and this one must be among them, or its lane waits for good.
            if (!o.inbox().gates.openFor(o.gate(), conn) && !owesAnswers(o.inbox(), conn)) {
                it.remove();
                o.inbox().incoming--;
                forgetConnection(conn);
                n++;
            }
        }
        return n;
    }

    /** Housekeeping only: reads the connection id each backlogged answer starts with. */
    private final org.agrona.concurrent.UnsafeBuffer scan = new org.agrona.concurrent.UnsafeBuffer(new byte[8]);

    /** @return whether an answer to {@code conn} waits in {@code to}'s backlog */
    private boolean owesAnswers(Inbox to, long conn) {
        for (byte[] m : to.backlog) {
            if (m.length >= ShmWire.CONN + 8) {
                scan.wrap(m);
                if (scan.getLong(ShmWire.CONN) == conn) {
                    return true;
                }
            }
        }
        return false;
    }

    /**
     * A peer worker closed or its process is gone: its connections here are forgotten.
     *
     * @return their ids
     */
    LongArrayList peerGone(Inbox dead) {
        LongArrayList gone = new LongArrayList();
        origins.forEachLong((conn, o) -> {
            if (o.inbox() == dead) {
                gone.addLong(conn);
            }
        });
        for (int i = 0; i < gone.size(); i++) {
            long conn = gone.getLong(i);
            origins.remove(conn);
            dead.incoming--;
            forgetConnection(conn);
        }
        return gone;
    }

    /** The connection no longer holds its origin's window (it lingers for a copy re-sent elsewhere). */
    private void forgetConnection(long conn) {
        ExactlyOnceWindows.Window w = connWindows.remove(conn);
        if (w != null) {
            windows.release(w);
        }
    }

    /**
     * The window of {@code origin} of the connection's worker; a connection carries one origin endpoint.
     *
     * @throws FencelineException if the worker's bound cannot hold it
     */
    private DedupWindow window(long conn, Origin o, long origin) {
        ExactlyOnceWindows.Window w = connWindows.get(conn);
        if (w == null || w.origin() != origin) {
            if (w != null) {
                windows.release(w);
                connWindows.remove(conn);
            }
            w = windows.retain(o.worker(), ExactlyOnceWindows.MEMBER, origin);
            if (w == null) {
                throw new FencelineException("shm worker '" + context.workerName() + "': no room for the exactly-once"
                        + " window of endpoint " + Long.toHexString(origin) + " of worker " + o.worker()
                        + " (fenceline.exactly-once.entries-per-peer or .entries); not applied");
            }
            connWindows.put(conn, w);
        }
        return w.window();
    }

    void onConnect(AtomicBuffer b, int at, int length) {
        if (length < 48) {
            dropped.accept("a CONNECT of " + length + " bytes (at least 48)");
            return;
        }
        long conn = b.getLong(at);
        int gate = b.getInt(at + 40);
        int n = b.getInt(at + 44);
        if (n <= 0 || n > length - 48 || n > 255) {
            dropped.accept("a CONNECT whose name length " + n + " does not fit its " + length + " bytes");
            return;
        }
        String name = b.getStringWithoutLengthUtf8(at + 48, n);
        if (!Segments.isControlName(name)) {
            dropped.accept("a CONNECT naming '" + Segments.printable(name) + "', not a control segment");
            return;
        }
        Inbox origin;
        try {
            origin = mapInbox.apply(name);
        } catch (FencelineException e) {
            dropped.accept("a CONNECT from " + name + ": " + e.getMessage()); // counted, not a line each
            return;
        }
        // Checked before its segment is kept (a refused one's mapping is let go): else CONNECTs
        // naming segments made for the purpose would have this worker map and watch each for good.
        if (!origin.gates.valid(gate)) {
            dropped.accept("a CONNECT from " + name + " naming gate " + gate + " of its " + origin.gates.slots());
            discard.accept(origin);
            return;
        }
        if (!origin.gates.openFor(gate, conn)) { // its origin opens the gate first: else not its CONNECT
            discard.accept(origin);
            dropped.accept("a CONNECT from " + name + " for connection " + Long.toHexString(conn) + ", whose gate "
                    + gate + " is not open for it");
            return;
        }
        origin = adopt.apply(origin); // the one published first, if another thread mapped it too
        if (origins.containsKey(conn)) {
            dropped.accept("a second CONNECT from " + name + " for connection " + Long.toHexString(conn));
            return;
        }
        if (origin.resetsOwed > 0) {
            // Its inbox is still full since its connections were reset: a new one would only queue
            // its CONNECTED (and its answers) behind the RESETs, and CONNECTs would pile them up.
            dropped.accept("a CONNECT from " + name + " while " + origin.resetsOwed + " RESET(s) to it wait for room"
                    + " in its inbox");
            return;
        }
        if (origin.incoming >= settings.maxLanes()) {
            // One peer worker cannot make this worker hold more of its connections than it has gate
            // slots itself with the same configuration; past that, CONNECTs go unanswered.
            dropped.accept("a CONNECT from " + name + ": it holds " + origin.incoming + " connections here, the most "
                    + ShmSettings.SECTION + ".max-lanes = " + settings.maxLanes() + " allows per peer worker");
            return;
        }
        origins.put(conn, new Origin(origin, gate, origin.worker)); // the worker of the segment that is answered
        origin.incoming++;
        reply(origin, ShmWire.CONNECTED, 12, (r, i) -> {
            r.putLong(i, conn);
            r.putInt(i + 8, settings.maxFragment());
        });
    }

    /** Writes one reply into {@code to}'s inbox, or its backlog; past max-backlog, {@link #overflow}. */
    private void reply(Inbox to, int type, int length, ShmReplies.Writer w) {
        if (!replies.reply(to, type, length, w)) {
            overflow(to, length);
        }
    }

    /**
     * The answers owed to {@code to}, whose inbox stays full, would pass max-backlog (a peer that
     * does not read its inbox would otherwise grow this heap without bound): its connections here
     * are dropped with every answer still owed, and each is told so by a RESET once its inbox has
     * room. Its lanes then fail, and what this worker took (their gates say which) counts there as
     * unanswered.
     */
    private void overflow(Inbox to, int length) {
        String why = "shm: worker '" + context.workerName() + "' dropped this connection: the answers it owed "
                + to.name + " passed " + ShmSettings.SECTION + ".max-backlog = " + settings.maxBacklog()
                + " bytes while that inbox was full";
        LOG.warn("shm {}: {} owes {} bytes of answers and its inbox is full; {} more would pass {}.max-backlog = {}:"
                + " its connections here are dropped", context.workerName(), to.name, to.backlogBytes, length,
                ShmSettings.SECTION, settings.maxBacklog());
        ShmReplies.dropAnswers(to);
        LongArrayList dropped = peerGone(to);
        byte[] text = why.getBytes(StandardCharsets.UTF_8);
        int n = Math.min(text.length, ShmWire.MAX_TEXT);
        for (int i = 0; i < dropped.size(); i++) {
            UnsafeBuffer reset = new UnsafeBuffer(new byte[10 + n]);
            reset.putLong(0, dropped.getLong(i));
            reset.putShort(8, (short) n);
            reset.putBytes(10, text, 0, n);
            ShmReplies.backlog(to, ShmWire.RESET, reset.byteArray());
        }
    }

    /** Sends what waited for room in {@code to}'s ring; @return how many */
    int drainBacklog(Inbox to) {
        return replies.drain(to);
    }

    private static int minimumLength(int type) {
        return switch (type) {
            case ShmWire.FLUSH -> 16;
            case ShmWire.PUT -> ShmWire.RMA_DATA;
            case ShmWire.GET -> ShmWire.GET_LENGTH + 4;
            case ShmWire.ATOMIC -> ShmWire.ATOMIC_LENGTH;
            case ShmWire.AM -> ShmWire.AM_DATA;
            default -> Integer.MAX_VALUE;
        };
    }

    void onRequest(int type, AtomicBuffer b, int at, int length, long conn) {
        Origin o = origins.get(conn);
        if (o == null) {
            LOG.debug("shm {}: a request on unknown connection {}", context.workerName(), Long.toHexString(conn));
            return;
        }
        Inbox origin = o.inbox();
        if (minimumLength(type) == Integer.MAX_VALUE) {
            dropped.accept("a message of unknown type " + type + " from " + origin.name);
            return;
        }
        if (length < minimumLength(type)) {
            String what = "shm: a " + ShmWire.name(type) + " of " + length + " bytes from " + origin.name
                    + ", less than the " + minimumLength(type) + " it needs; not applied";
            dropped.accept(what.substring(5));
            if (length >= 16) { // it names its token: the origin learns why
                long token = b.getLong(at + ShmWire.TOKEN);
                nack(origin, conn, token, new FencelineException(what));
            }
            return;
        }
        // The origin may have withdrawn it (it gave the lane up): then it is not applied, nor answered.
        if (!origin.gates.enter(o.gate(), conn)) {
            return;
        }
        try {
            serve(type, b, at, length, conn, o);
        } finally {
            if (!origin.gates.leave(o.gate())) { // after the answer: the origin counts it taken
                dropped.accept("the gate update after a record of connection " + Long.toHexString(conn)
                        + " (its origin kept changing the gate's word; left busy)");
            }
        }
    }

    private void serve(int type, AtomicBuffer b, int at, int length, long conn, Origin o) {
        Inbox origin = o.inbox();
        long token = b.getLong(at + ShmWire.TOKEN);
        if (type == ShmWire.FLUSH) {
            reply(origin, ShmWire.FLUSHED, 16, (r, i) -> {
                r.putLong(i, conn);
                r.putLong(i + 8, token);
            });
            return;
        }
        long originId = b.getLong(at + ShmWire.ORIGIN);
        long seq = b.getLong(at + ShmWire.SEQ);
        long low = b.getLong(at + ShmWire.LOW);
        if (type == ShmWire.GET) {
            try {
                exactlyOnce.checkNotRefused(window(conn, o, originId), originId);
            } catch (FencelineException e) {
                nack(origin, conn, token, e);
                return;
            }
            get(origin, conn, token, b, at); // a read has no effect: a re-sent one is read again
            return;
        }
        if (seq < -1 || low < -1) { // -1: without exactly-once; below it nothing the protocol sends
            nack(origin, conn, token, new FencelineException("shm: a " + ShmWire.name(type) + " from " + origin.name
                    + " with sequence number " + seq + " and low-water mark " + low
                    + " (neither may be below -1); not applied"));
            return;
        }
        long value;
        applying = b;
        applyingType = type;
        applyingAt = at;
        applyingLength = length;
        try {
            if (seq < 0) {
                exactlyOnce.checkNotRefused(window(conn, o, originId), originId);
                value = applyCurrent.apply();
            } else {
                DedupWindow w = window(conn, o, originId);
                if (type == ShmWire.AM) { // a user's handler: the window's lock is not held while it runs
                    value = exactlyOnce.applyOutsideLock(w, originId, seq, low, applyCurrent);
                } else {
                    synchronized (w) { // the worker's other transports apply through it too
                        value = exactlyOnce.apply(w, originId, seq, low, applyCurrent);
                    }
                }
            }
        } catch (FencelineException e) {
            nack(origin, conn, token, e);
            return;
        } finally {
            applying = null;
        }
        ack(origin, conn, token, value);
    }

    // The message being applied (polling thread): fields, not a capturing lambda, so that applying
    // one costs no allocation.
    private AtomicBuffer applying;
    private int applyingType;
    private int applyingAt;
    private int applyingLength;
    private final ExactlyOnce.Operation applyCurrent = () -> apply(applyingType, applying, applyingAt, applyingLength);
    /** The read-only views of the message being applied. */
    private final ShmViews views = new ShmViews();

    private long apply(int type, AtomicBuffer b, int at, int length) {
        RemoteAccessTarget t = context.target();
        switch (type) {
            case ShmWire.PUT -> {
                int n = length - ShmWire.RMA_DATA;
                t.put(b.getLong(at + ShmWire.BODY), b.getLong(at + ShmWire.BODY + 8), views.of(b, at + ShmWire.RMA_DATA, n));
                return 0;
            }
            case ShmWire.ATOMIC -> {
                long key = b.getLong(at + ShmWire.BODY);
                long address = b.getLong(at + ShmWire.BODY + 8);
                byte kind = b.getByte(at + ShmWire.ATOMIC_KIND);
                int width = b.getByte(at + ShmWire.ATOMIC_KIND + 2);
                long operand = b.getLong(at + ShmWire.ATOMIC_OPERAND);
                if (kind == ShmWire.KIND_CSWAP) {
                    return t.compareAndSwap(key, address, width, b.getLong(at + ShmWire.ATOMIC_COMPARE), operand);
                }
                AtomicOp op = WireCodes.atomicOp(b.getByte(at + ShmWire.ATOMIC_KIND + 1));
                if (op == null) {
                    throw new FencelineException("shm: unknown atomic operation");
                }
                return t.atomic(key, address, width, op, operand);
            }
            case ShmWire.AM -> {
                int h = b.getInt(at + ShmWire.AM_HEADER_LENGTH);
                int p = length - ShmWire.AM_DATA - h;
                if (h < 0 || p < 0) {
                    throw new FencelineException("shm: a malformed active message");
                }
                t.activeMessage(b.getInt(at + ShmWire.AM_ID), views.of(b, at + ShmWire.AM_DATA, h),
                        views.of(b, at + ShmWire.AM_DATA + h, p));
                return 0;
            }
            default -> throw new FencelineException("shm: unknown message type " + type);
        }
    }

    private void get(Inbox origin, long conn, long token, AtomicBuffer b, int at) {
        long key = b.getLong(at + ShmWire.BODY);
        long address = b.getLong(at + ShmWire.BODY + 8);
        int n = b.getInt(at + ShmWire.GET_LENGTH);
        int limit = Math.min(settings.maxFragment(), origin.ring.maxMsgLength() - GET_DATA_HEADER);
        if (n < 0 || n > limit) { // the data goes back in one message of the origin's ring
            nack(origin, conn, token, new FencelineException("shm: a get of " + n + " bytes is over the limit of "
                    + limit + " (" + ShmSettings.SECTION + ".max-fragment here, or the largest message of "
                    + origin.name + "'s ring)"));
            return;
        }
        ByteBuffer data = ByteBuffer.allocate(n);
        try {
            context.target().get(key, address, data);
        } catch (FencelineException e) {
            nack(origin, conn, token, e);
            return;
        }
        reply(origin, ShmWire.GET_DATA, GET_DATA_HEADER + n, (r, i) -> {
            r.putLong(i, conn);
            r.putLong(i + 8, token);
            r.putBytes(i + 16, data, 0, n);
        });
    }

    private void ack(Inbox origin, long conn, long token, long value) {
        reply(origin, ShmWire.ACK, 24, (r, i) -> {
            r.putLong(i, conn);
            r.putLong(i + 8, token);
            r.putLong(i + 16, value);
        });
    }

    private void nack(Inbox origin, long conn, long token, FencelineException e) {
        byte[] text = String.valueOf(e.getMessage()).getBytes(StandardCharsets.UTF_8);
        int n = Math.min(text.length, ShmWire.MAX_TEXT);
        reply(origin, ShmWire.NACK, 20 + n, (r, i) -> {
            r.putLong(i, conn);
            r.putLong(i + 8, token);
            r.putByte(i + 16, (byte) WireCodes.errorCode(e));
            r.putByte(i + 17, (byte) WireCodes.reasonCode(e));
            r.putShort(i + 18, (short) n);
            r.putBytes(i + 20, text, 0, n);
        });
    }
}
