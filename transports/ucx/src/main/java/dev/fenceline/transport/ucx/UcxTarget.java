package dev.fenceline.transport.ucx;

import dev.fenceline.AtomicOp;
import dev.fenceline.FencelineException;
import dev.fenceline.spi.RemoteAccessTarget;
import dev.fenceline.spi.support.DedupWindow;
import dev.fenceline.spi.support.ExactlyOnce;
import dev.fenceline.spi.support.WireCodes;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.HashMap;
import java.util.Map;
import java.util.UUID;
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

    /**
     * A peer's connection to this worker.
     *
     * @param peer the peer worker
     * @param reply where its answers go
     */
    record Conn(UcxPeer peer, UcxChannel reply) {
    }

    /** One origin endpoint of one peer worker: what an exactly-once window is kept for. */
    private record Origin(UUID peer, long endpoint) {
    }

    private final String workerName;
    private final RemoteAccessTarget target;
    private final ExactlyOnce exactlyOnce;
    private final Replies replies;
    private final Long2ObjectHashMap<Conn> conns = new Long2ObjectHashMap<>();
    /** The origin endpoint each connection carries, once it sent something. */
    private final Long2ObjectHashMap<Origin> connOrigins = new Long2ObjectHashMap<>();
    private final Map<Origin, DedupWindow> windows = new HashMap<>();
    private final UnsafeBuffer out;
    private final ByteBuffer outBuffer;
    private long dropped;

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
     * @param dedupWindow the windows' spread
     * @param maxReply the largest reply a reply channel carries
     * @param replies sends replies
     */
    UcxTarget(String workerName, RemoteAccessTarget target, int dedupWindow, int maxReply, Replies replies) {
        this.workerName = workerName;
        this.target = target;
        this.exactlyOnce = new ExactlyOnce("ucx worker '" + workerName + "'", dedupWindow);
        this.replies = replies;
        this.outBuffer = ByteBuffer.allocateDirect(Math.max(maxReply, UcxWire.REPLY_HEADER + UcxWire.MAX_TEXT))
                .order(java.nio.ByteOrder.nativeOrder());
        this.out = new UnsafeBuffer(outBuffer);
    }

    /** @return the largest get a reply carries */
    int maxGet() {
        return out.capacity() - UcxWire.REPLY_HEADER;
    }

    /**
     * A peer opens a connection.
     *
     * @param conn its id
     * @param c the peer and reply channel
     * @return false if the id is taken already
     */
    boolean open(long conn, Conn c) {
        if (conns.containsKey(conn)) {
            return false;
        }
        conns.put(conn, c);
        c.peer().incoming++;
        return true;
    }

    /** The peer closed a connection (BYE). */
    void close(long conn) {
        Conn c = conns.remove(conn);
        if (c != null) {
            c.peer().incoming--;
            forget(conn);
        }
    }

    /** A reply channel failed, or its peer went: the connections on it are forgotten. */
    void lost(UcxChannel reply) {
        for (Long2ObjectHashMap<Conn>.EntryIterator it = conns.entrySet().iterator(); it.hasNext();) {
            it.next();
            Conn c = it.getValue();
            if (c.reply() == reply) {
                long conn = it.getLongKey();
                it.remove();
                c.peer().incoming--;
                forget(conn);
            }
        }
    }

    /** Drops the window of the connection's origin endpoint when no connection carries it any more. */
    private void forget(long conn) {
        Origin o = connOrigins.remove(conn);
        if (o != null && !connOrigins.containsValue(o)) {
            DedupWindow w = windows.remove(o);
            if (w != null) {
                w.release();
            }
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
        if (length < 16) {
            dropped("a request of " + length + " bytes");
            return;
        }
        long conn = data.getLong(at + UcxWire.CONN);
        long token = data.getLong(at + UcxWire.TOKEN);
        Conn c = conns.get(conn);
        if (c == null) {
            dropped("a request on unknown connection " + Long.toHexString(conn));
            return;
        }
        if (length < UcxWire.REQUEST_HEADER) {
            nack(c, conn, token, new FencelineException("ucx: a request of " + length + " bytes, less than the "
                    + UcxWire.REQUEST_HEADER + " of its header; not applied"));
            return;
        }
        int kind = data.getByte(at + UcxWire.KIND);
        if (kind == UcxWire.FLUSH) {
            reply(c, conn, token, UcxWire.FLUSHED, 0);
            return;
        }
        long origin = data.getLong(at + UcxWire.ORIGIN);
        Origin o = connOrigins.get(conn);
        if (o == null || o.endpoint() != origin) {
            o = new Origin(c.peer().id, origin); // a connection carries one origin endpoint: once
            connOrigins.put(conn, o);
        }
        long seq = data.getLong(at + UcxWire.SEQ);
        long low = data.getLong(at + UcxWire.LOW);
        if (kind == UcxWire.GET) {
            get(c, conn, token, data, at); // a read has no effect: a copy sent again is read again
            return;
        }
        DedupWindow w = seq < 0 ? null : windows.computeIfAbsent(o, k -> exactlyOnce.newWindow());
        applying = data;
        applyingAt = at;
        applyingLength = length;
        applyingKind = kind;
        long value;
        try {
            value = exactlyOnce.apply(w, origin, seq, low, applyCurrent);
        } catch (FencelineException e) {
            nack(c, conn, token, e);
            return;
        } finally {
            applying = null;
        }
        reply(c, conn, token, UcxWire.ACK, value);
    }

    // The request being applied: fields, not a capturing lambda, so applying one allocates nothing more.
    private DirectBuffer applying;
    private int applyingAt;
    private int applyingLength;
    private int applyingKind;
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

    /** A read-only view of part of the event buffer, valid during this call only (the target copies out). */
    private static ByteBuffer view(DirectBuffer b, int at, int n) {
        long address = b.addressOffset() + at;
        return com.kenai.jffi.MemoryIO.getInstance().newDirectByteBuffer(address, n).asReadOnlyBuffer();
    }

    private void get(Conn c, long conn, long token, DirectBuffer b, int at) {
        int n = b.getInt(at + UcxWire.LENGTH);
        if (n < 0 || n > maxGet()) {
            nack(c, conn, token, new FencelineException("ucx: a get of " + n + " bytes; one reply carries at most "
                    + maxGet()));
            return;
        }
        try {
            target.get(b.getLong(at + UcxWire.KEY), b.getLong(at + UcxWire.ADDRESS),
                    outBuffer.duplicate().position(UcxWire.REPLY_HEADER).limit(UcxWire.REPLY_HEADER + n).slice());
        } catch (FencelineException e) {
            nack(c, conn, token, e);
            return;
        }
        header(conn, token, UcxWire.DATA, 0, 0, n, 0);
        replies.reply(c.reply(), out, UcxWire.REPLY_HEADER + n);
    }

    private void reply(Conn c, long conn, long token, byte type, long value) {
        header(conn, token, type, 0, 0, 0, value);
        replies.reply(c.reply(), out, UcxWire.REPLY_HEADER);
    }

    private void nack(Conn c, long conn, long token, FencelineException e) {
        byte[] text = String.valueOf(e.getMessage()).getBytes(StandardCharsets.UTF_8);
        int n = Math.min(text.length, UcxWire.MAX_TEXT);
        header(conn, token, UcxWire.NACK, WireCodes.errorCode(e), WireCodes.reasonCode(e), n, 0);
        out.putBytes(UcxWire.REPLY_HEADER, text, 0, n);
        replies.reply(c.reply(), out, UcxWire.REPLY_HEADER + n);
    }

    private void header(long conn, long token, byte type, int code, int reason, int length, long value) {
        out.putLong(UcxWire.CONN, conn);
        out.putLong(UcxWire.TOKEN, token);
        out.putByte(UcxWire.REPLY_TYPE, type);
        out.putByte(UcxWire.REPLY_CODE, (byte) code);
        out.putByte(UcxWire.REPLY_REASON, (byte) reason);
        out.putByte(UcxWire.REPLY_REASON + 1, (byte) 0);
        out.putInt(UcxWire.REPLY_LENGTH, length);
        out.putLong(UcxWire.REPLY_VALUE, value);
    }

    /** A peer went: its connections and windows here are forgotten. */
    void peerGone(UcxPeer peer) {
        for (Long2ObjectHashMap<Conn>.EntryIterator it = conns.entrySet().iterator(); it.hasNext();) {
            it.next();
            if (it.getValue().peer() == peer) {
                long conn = it.getLongKey();
                it.remove();
                peer.incoming--;
                forget(conn);
            }
        }
        windows.entrySet().removeIf(e -> {
            if (e.getKey().peer().equals(peer.id)) {
                e.getValue().release();
                return true;
            }
            return false;
        });
    }
}
