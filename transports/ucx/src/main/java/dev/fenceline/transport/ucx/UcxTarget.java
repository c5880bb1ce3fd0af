package dev.fenceline.transport.ucx;

import dev.fenceline.AtomicOp;
import dev.fenceline.FencelineException;
import dev.fenceline.spi.RemoteAccessTarget;
import dev.fenceline.spi.support.DedupWindow;
import dev.fenceline.spi.support.ExactlyOnce;
import dev.fenceline.spi.support.ExactlyOnceWindows;
import dev.fenceline.spi.support.WireCodes;
import java.nio.ByteBuffer;
import org.agrona.DirectBuffer;
import org.agrona.collections.Long2ObjectHashMap;
import org.agrona.concurrent.UnsafeBuffer;

/**
 * The target side of one worker's ucx transport, on its progress agent: the connections peers
 * opened to this worker, their software requests checked, applied to this worker's memory at most
 * once per origin endpoint and answered, in order, on the reply channel of each connection. Every
 * byte of a request was written by another process and is checked before use.
 */
final class UcxTarget {
    private static final org.slf4j.Logger LOG = org.slf4j.LoggerFactory.getLogger(UcxTarget.class);

    private final String workerName;
    private final RemoteAccessTarget target;
    private final ExactlyOnceWindows windows;
    private final ExactlyOnce exactlyOnce;
    private final Long2ObjectHashMap<UcxIncoming> conns = new Long2ObjectHashMap<>();
    /** The window of the origin endpoint each connection carries, once it sent something (retained). */
    private final Long2ObjectHashMap<ExactlyOnceWindows.Window> connWindows = new Long2ObjectHashMap<>();
    private long dropped;
    /** Messages arriving in parts (fenceline.transport.ucx.max-fragment the largest). */
    private final UcxAssemblies assemblies;
    /** The answers, and the ACKs held back to go several in one message. */
    private final UcxAnswers answers;
    /** Sends a reply: what the agent does with the bytes in {@code out}. */
    interface Replies {
        /**
         * @param channel the reply channel
         * @param buffer the reply
         * @param length its bytes
         */
        void reply(UcxChannel channel, UnsafeBuffer buffer, int length);
    }

    /**
     * @param workerName for messages
     * @param target the worker's memory and handlers
     * @param windows the worker's exactly-once windows, shared with its other transports
     * @param maxReply the largest reply a reply channel carries
     * @param maxMessage the largest message assembled from parts
     * @param assemblyTimeoutNanos how long a message arriving in parts may wait for its next part and
     *     keep its room when another needs it ({@link UcxAssemblies})
     * @param answerHoldNanos how long ACKs nobody waits for one by one may be held back ({@link UcxHeldAnswers})
     * @param replies sends replies
     */
    UcxTarget(String workerName, RemoteAccessTarget target, ExactlyOnceWindows windows, int maxReply,
            int maxMessage, long assemblyTimeoutNanos, long answerHoldNanos, Replies replies) {
        this.workerName = workerName;
        this.assemblies = new UcxAssemblies(workerName, maxMessage, assemblyTimeoutNanos, System::nanoTime,
                this::dropped);
        this.target = target;
        this.windows = windows;
        this.exactlyOnce = windows.exactlyOnce();
        this.answers = new UcxAnswers(maxReply, answerHoldNanos, replies);
    }

    /** @return the largest get a reply carries */
    int maxGet() {
        return answers.maxGet();
    }

    /** @return the connections peers hold open here */
    int incoming() {
        return conns.size();
    }

    /** @return bytes held by messages arriving in parts */
    long assembling() {
        return assemblies.held();
    }

    /** @return whether a peer's connection of this id is open */
    boolean isOpen(long conn) {
        return conns.containsKey(conn);
    }

    /**
     * A peer opens a connection.
     *
     * @param conn its id
     * @param c the peer and reply channel
     * @return false if the id is taken already
     */
    boolean open(long conn, UcxIncoming c) {
        if (conns.containsKey(conn)) {
            return false;
        }
        conns.put(conn, c);
        c.peer().incoming++;
        return true;
    }

    /** The peer closed a connection (BYE). */
    void close(long conn) {
        UcxIncoming c = conns.remove(conn);
        if (c != null) {
            c.peer().incoming--;
            forget(conn);
        }
    }

    /** A reply channel failed, or its peer went: the connections on it are forgotten. */
    void lost(UcxChannel reply) {
        for (Long2ObjectHashMap<UcxIncoming>.EntryIterator it = conns.entrySet().iterator(); it.hasNext();) {
            it.next();
            UcxIncoming c = it.getValue();
            if (c.reply() == reply) {
                long conn = it.getLongKey();
                it.remove();
                c.peer().incoming--;
                forget(conn);
            }
        }
    }

    /**
     * The connection no longer holds its origin's window (it lingers for a copy re-sent elsewhere),
     * nor a message in parts.
     */
    private void forget(long conn) {
        assemblies.drop(conn);
        answers.forget(conn);
        ExactlyOnceWindows.Window w = connWindows.remove(conn);
        if (w != null) {
            windows.release(w);
        }
    }

    /** A malformed or unknown request was dropped: logged the first time and at every power of two. */
    private void dropped(String what) {
        long n = ++dropped;
        if (Long.bitCount(n) == 1) {
            LOG.warn("ucx {}: dropped {} ({} request(s) dropped so far)", workerName, what, n);
        }
    }

    /**
     * A request arrived.
     *
     * @param data where it is (valid during the call)
     * @param at its first byte
     * @param length its bytes
     */
    void onRequest(DirectBuffer data, int at, int length) {
        UcxIncoming c = withHeader(data, at, length, "a request", UcxWire.REQUEST_HEADER);
        if (c == null) {
            return;
        }
        long conn = data.getLong(at + UcxWire.CONN);
        long token = data.getLong(at + UcxWire.TOKEN);
        int kind = data.getByte(at + UcxWire.KIND);
        if (kind == UcxWire.FLUSH) {
            reply(c, conn, token, UcxWire.FLUSHED, 0);
            return;
        }
        if (kind == UcxWire.EXPEDITE) {
            answers.release(conn); // not answered itself
            return;
        }
        if (kind == UcxWire.PART) {
            assemblies.part(conn, c.peer(), token, data, at, length); // not answered: its MESSAGE is
            return;
        }
        byte[] assembled = null;
        if (kind == UcxWire.MESSAGE && (data.getLong(at + UcxWire.ADDRESS) != 0 || assemblies.has(conn))) {
            try {
                assembled = assemblies.assembled(conn, token, data, at, length);
            } catch (FencelineException e) {
                unassembled(c, conn, token, data, at, e);
                return;
            }
        }
        long origin = data.getLong(at + UcxWire.ORIGIN);
        long seq = data.getLong(at + UcxWire.SEQ);
        long low = data.getLong(at + UcxWire.LOW);
        if (kind == UcxWire.GET) {
            try {
                exactlyOnce.checkNotRefused(window(c, conn, origin), origin);
            } catch (FencelineException e) {
                nack(c, conn, token, e);
                return;
            }
            get(c, conn, token, data, at); // a read has no effect: a copy sent again is read again
            return;
        }
        if (seq < -1 || low < -1) { // -1: without exactly-once; below it nothing the protocol sends
            nack(c, conn, token, new FencelineException("ucx: a request on connection " + Long.toHexString(conn)
                    + " with sequence number " + seq + " and low-water mark " + low
                    + " (neither may be below -1); not applied"));
            return;
        }
        applying = data;
        applyingAt = at;
        applyingLength = length;
        applyingKind = kind;
        applyingAssembled = assembled;
        long value;
        try {
            if (seq < 0) {
                exactlyOnce.checkNotRefused(window(c, conn, origin), origin);
                value = applyCurrent.apply();
            } else {
                DedupWindow w = window(c, conn, origin);
                if (kind == UcxWire.MESSAGE) { // a user's handler: the window's lock is not held while it runs
                    value = exactlyOnce.applyOutsideLock(w, origin, seq, low, applyCurrent);
                } else {
                    synchronized (w) { // the worker's other transports apply through it too
                        value = exactlyOnce.apply(w, origin, seq, low, applyCurrent);
                    }
                }
            }
        } catch (FencelineException e) {
            nack(c, conn, token, e);
            return;
        } finally {
            applying = null;
            applyingAssembled = null;
        }
        answers.applied(c.reply(), conn, token,
                (data.getByte(at + UcxWire.FLAGS) & UcxWire.ANSWER_MAY_WAIT) != 0 && answerHasNoValue(kind), value);
    }

    /**
     * {@link #named}, then the message's header checked whole: one cut short is refused (NACKed).
     *
     * @param what the message's kind, for the log and the refusal
     * @param header the bytes of its header
     * @return the open connection it names, or null where it was dropped or refused
     */
    private UcxIncoming withHeader(DirectBuffer data, int at, int length, String what, int header) {
        UcxIncoming c = named(data, at, length, what);
        if (c != null && length < header) {
            nack(c, data.getLong(at + UcxWire.CONN), data.getLong(at + UcxWire.TOKEN), new FencelineException("ucx: "
                    + what + " of " + length + " bytes, less than the " + header + " of its header; not applied"));
            return null;
        }
        return c;
    }

    /**
     * @param what the message's kind, for the log
     * @return the open connection a message names, or null where it is too short to name one and
     *     the token to answer, or names none open here (then it is dropped: nobody can be answered)
     */
    private UcxIncoming named(DirectBuffer data, int at, int length, String what) {
        if (length < 16) {
            dropped(what + " of " + length + " bytes");
            return null;
        }
        long conn = data.getLong(at + UcxWire.CONN);
        UcxIncoming c = conns.get(conn);
        if (c == null) {
            dropped(what + " on unknown connection " + Long.toHexString(conn));
        }
        return c;
    }

    /**
     * A SHORT MESSAGE arrived: an active message without an exactly-once number, checked as a
     * MESSAGE request is ({@link #onRequest}), then answered, or its ACK held, the same way.
     *
     * @param data where it is (valid during the call)
     * @param at its first byte
     * @param length its bytes
     */
    void onShortMessage(DirectBuffer data, int at, int length) {
        UcxIncoming c = withHeader(data, at, length, "a short message", UcxWire.SHORT_HEADER);
        if (c == null) {
            return;
        }
        long conn = data.getLong(at + UcxWire.CONN);
        long token = data.getLong(at + UcxWire.TOKEN);
        if (assemblies.has(conn)) { // as a whole MESSAGE after parts: the sender broke its order
            assemblies.drop(conn);
            dropped("the parts of a message on connection " + Long.toHexString(conn) + ", followed by another's");
        }
        int bits = data.getByte(at + UcxWire.SHORT_BITS) & 0xff;
        int h = bits & UcxWire.SHORT_HEADER_LENGTH_MAX;
        int n = length - UcxWire.SHORT_HEADER;
        if (n > UcxWire.SHORT_DATA_MAX) {
            nack(c, conn, token, new FencelineException("ucx: a short message of " + n + " bytes after its header, more"
                    + " than the " + UcxWire.SHORT_DATA_MAX + " the form carries; not applied"));
            return;
        }
        if (h > n) {
            nack(c, conn, token, new FencelineException("ucx: an active message whose header of " + h + " bytes does"
                    + " not fit its " + n + "; not applied"));
            return;
        }
        long origin = data.getLong(at + UcxWire.ORIGIN);
        try {
            exactlyOnce.checkNotRefused(window(c, conn, origin), origin);
            target.activeMessage(data.getShort(at + UcxWire.SHORT_ID) & UcxWire.SHORT_ID_MAX,
                    view(data, at + UcxWire.SHORT_HEADER, h), view(data, at + UcxWire.SHORT_HEADER + h, n - h));
        } catch (FencelineException e) {
            nack(c, conn, token, e);
            return;
        }
        answers.applied(c.reply(), conn, token, (bits & UcxWire.SHORT_MAY_WAIT) != 0, 0);
    }

    /**
     * @return whether the kind's ACK says only "applied": a posted atomic's old value goes nowhere (a
     *     fetch's is its result, answered at once whatever the flag says)
     */
    private static boolean answerHasNoValue(int kind) {
        return kind == UcxWire.MESSAGE || kind == UcxWire.PUT || kind == UcxWire.ATOMIC_POST;
    }

    /** @return its answers, and the ACKs it holds back (for the agent's hold, deadline and release) */
    UcxAnswers answers() {
        return answers;
    }

    /**
     * A message that could not be assembled (no room, parts missing): not applied, so its reason
     * answers it, unless it is a copy of one the window saw before, which gets what any copy gets.
     */
    private void unassembled(UcxIncoming c, long conn, long token, DirectBuffer data, int at, FencelineException why) {
        long seq = data.getLong(at + UcxWire.SEQ);
        long low = data.getLong(at + UcxWire.LOW);
        if (seq < 0 || low < -1) { // untracked, or a mark the protocol never sends: the reason stands
            nack(c, conn, token, why);
            return;
        }
        long origin = data.getLong(at + UcxWire.ORIGIN);
        long value;
        try {
            DedupWindow w = window(c, conn, origin);
            synchronized (w) {
                value = exactlyOnce.answerUnapplied(w, origin, seq, low, why);
            }
        } catch (FencelineException e) {
            nack(c, conn, token, e);
            return;
        }
        reply(c, conn, token, UcxWire.ACK, value);
    }

    /**
     * The window of {@code origin} of the connection's peer; a connection carries one origin endpoint.
     *
     * @throws FencelineException if the peer's (or the worker's) bound cannot hold it
     */
    private DedupWindow window(UcxIncoming c, long conn, long origin) {
        ExactlyOnceWindows.Window w = connWindows.get(conn);
        if (w == null || w.origin() != origin) {
            if (w != null) {
                windows.release(w);
                connWindows.remove(conn);
            }
            w = windows.retain(c.peer().id, ExactlyOnceWindows.MEMBER, origin);
            if (w == null) {
                throw new FencelineException("ucx worker '" + workerName + "': no room for the exactly-once window of"
                        + " endpoint " + Long.toHexString(origin) + " of " + c.peer() + " (fenceline.exactly-once"
                        + ".entries-per-peer or .entries); not applied");
            }
            connWindows.put(conn, w);
        }
        return w.window();
    }

    /** The events' memory as a buffer ({@link #view}), and where it starts. */
    private ByteBuffer span;
    private long spanAddress;

    // The request being applied: fields, not a capturing lambda, so applying one allocates nothing more.
    private DirectBuffer applying;
    private int applyingAt;
    private int applyingLength;
    private int applyingKind;
    /** A message's bytes (header and payload) assembled from its parts, or null. */
    private byte[] applyingAssembled;
    private final ExactlyOnce.Operation applyCurrent = () -> apply(applyingKind, applying, applyingAt, applyingLength);

    private long apply(int kind, DirectBuffer b, int at, int length) {
        long key = b.getLong(at + UcxWire.KEY);
        long address = b.getLong(at + UcxWire.ADDRESS);
        switch (kind) {
            case UcxWire.PUT -> {
                target.put(key, address, view(b, at + UcxWire.REQUEST_HEADER, length - UcxWire.REQUEST_HEADER));
                return 0;
            }
            case UcxWire.ATOMIC_POST, UcxWire.ATOMIC_FETCH, UcxWire.CSWAP -> {
                int width = b.getByte(at + UcxWire.WIDTH);
                long operand = b.getLong(at + UcxWire.OPERAND);
                if (kind == UcxWire.CSWAP) {
                    return target.compareAndSwap(key, address, width, b.getLong(at + UcxWire.COMPARE), operand);
                }
                AtomicOp op = WireCodes.atomicOp(b.getByte(at + UcxWire.ATOMIC));
                if (op == null) {
                    throw new FencelineException("ucx: an atomic of unknown operation code " + b.getByte(at + UcxWire.ATOMIC));
                }
                return target.atomic(key, address, width, op, operand);
            }
            case UcxWire.MESSAGE -> {
                long h = b.getLong(at + UcxWire.OPERAND);
                byte[] whole = applyingAssembled;
                if (whole != null) {
                    if (h < 0 || h > whole.length) {
                        throw new FencelineException("ucx: an active message whose header of " + h + " bytes does"
                                + " not fit its " + whole.length);
                    }
                    int n = (int) h;
                    target.activeMessage(b.getInt(at + UcxWire.LENGTH), ByteBuffer.wrap(whole, 0, n).slice()
                            .asReadOnlyBuffer(), ByteBuffer.wrap(whole, n, whole.length - n).slice().asReadOnlyBuffer());
                    return 0;
                }
                long data = length - UcxWire.REQUEST_HEADER;
                if (h < 0 || h > data) {
                    throw new FencelineException("ucx: an active message whose header of " + h + " bytes does not fit"
                            + " its " + data);
                }
                int n = (int) h;
                target.activeMessage(b.getInt(at + UcxWire.LENGTH), view(b, at + UcxWire.REQUEST_HEADER, n),
                        view(b, at + UcxWire.REQUEST_HEADER + n, (int) data - n));
                return 0;
            }
            default -> throw new FencelineException("ucx: a request of unknown kind " + kind);
        }
    }

    /**
     * A read-only view of part of the event buffer, valid during this call only (the target copies out).
     * A slice of one buffer over the events' memory, made again only when that memory moves or grows:
     * a direct buffer of its own for each view cost a JNI call per request.
     */
    private ByteBuffer view(DirectBuffer b, int at, int n) {
        long base = b.addressOffset();
        if (span == null || spanAddress != base || span.capacity() < b.capacity()) {
            span = com.kenai.jffi.MemoryIO.getInstance().newDirectByteBuffer(base, b.capacity()).asReadOnlyBuffer();
            spanAddress = base;
        }
        return span.slice(at, n);
    }

    private void get(UcxIncoming c, long conn, long token, DirectBuffer b, int at) {
        int n = b.getInt(at + UcxWire.LENGTH);
        // The reply goes in one active message on this connection's channel, whose iface may carry
        // less than the largest of the worker's (which bounds the reply buffer), and less than the
        // origin's own iface: a longer reply would fail the channel, and every lane on it.
        int max = Math.min(maxGet(), c.maxGet());
        if (n < 0 || n > max) {
            nack(c, conn, token, new FencelineException("ucx: a get of " + n + " bytes; one reply on this connection's"
                    + " channel carries at most " + max));
            return;
        }
        try {
            target.get(b.getLong(at + UcxWire.KEY), b.getLong(at + UcxWire.ADDRESS), answers.dataSpace(n));
        } catch (FencelineException e) {
            nack(c, conn, token, e);
            return;
        }
        answers.data(c.reply(), conn, token, n);
    }

    private void reply(UcxIncoming c, long conn, long token, byte type, long value) {
        answers.reply(c.reply(), conn, token, type, value);
    }

    private void nack(UcxIncoming c, long conn, long token, FencelineException e) {
        answers.nack(c.reply(), conn, token, e);
    }

    /** A peer went: its connections here are forgotten (their windows linger, as every window does). */
    void peerGone(UcxPeer peer) {
        for (Long2ObjectHashMap<UcxIncoming>.EntryIterator it = conns.entrySet().iterator(); it.hasNext();) {
            it.next();
            if (it.getValue().peer() == peer) {
                long conn = it.getLongKey();
                it.remove();
                peer.incoming--;
                forget(conn);
            }
        }
    }
}
