package dev.fenceline.transport.ucx;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.ArrayList;
import org.agrona.collections.Long2ObjectHashMap;
import org.agrona.concurrent.UnsafeBuffer;

/**
 * The target's ACKs that nobody waits for one by one, held back for a moment to go several in one
 * message: the answer to a request its origin flagged {@link UcxWire#ANSWER_MAY_WAIT} (an active
 * message a calling thread sent, whose answer only a flush or the lane's window reads) and that
 * carries no value. Over a socket every answer sent alone is a system call on each side, and in a
 * ping-pong of messages the answer to one arrived beside the next, read before it.
 *
 * <p>Held per connection and sent in the order held: when {@link #MAX} are held, before any other
 * answer on the connection (the origin takes answers in order), when the origin asks
 * ({@link UcxWire#EXPEDITE}, or a flush, answered after them), and at the latest the hold
 * ({@code answer-hold}) after the first was held: the agent sleeps no longer than {@link #deadline()}.
 * Progress agent only.
 */
final class UcxHeldAnswers {
    /** The most held for one connection: one message of 512 bytes. */
    static final int MAX = 16;
    /** What one connection holds. */
    private static final class Held {
        final UcxChannel reply;
        final UnsafeBuffer records = new UnsafeBuffer(ByteBuffer.allocateDirect(MAX * UcxWire.REPLY_HEADER)
                .order(ByteOrder.nativeOrder()));
        int count;
        long since;

        Held(UcxChannel reply) {
            this.reply = reply;
        }
    }

    private final UcxTarget.Replies out;
    /** The longest an answer is held; 0: none is. */
    private final long holdNanos;
    private boolean enabled;
    /** Every connection that held an answer, kept while it is open (its buffer is reused). */
    private final Long2ObjectHashMap<Held> byConn = new Long2ObjectHashMap<>();
    /** Those holding answers now, oldest first. */
    private final ArrayList<Held> holding = new ArrayList<>();

    /**
     * @param out sends a message of answers on a reply channel
     * @param holdNanos the longest an answer is held; 0: none is
     */
    UcxHeldAnswers(UcxTarget.Replies out, long holdNanos) {
        this.out = out;
        this.holdNanos = holdNanos;
    }

    /**
     * Answers are held only once enabled: by an agent on a thread of its own, which releases them
     * at the deadline whether it polls or sleeps ({@link UcxAgent#ownThread}).
     */
    void enable() {
        enabled = holdNanos > 0;
    }

    /** @return whether answers are held */
    boolean holds() {
        return enabled;
    }

    /**
     * Holds an ACK without a value; sends the connection's held answers once they are {@link #MAX}.
     *
     * @param conn the connection
     * @param reply its reply channel
     * @param token the answered request's token
     */
    void hold(long conn, UcxChannel reply, long token) {
        Held h = byConn.get(conn);
        if (h == null) {
            h = new Held(reply);
            byConn.put(conn, h);
        }
        if (h.count == 0) {
            h.since = System.nanoTime();
            holding.add(h);
        }
        int at = h.count * UcxWire.REPLY_HEADER;
        UnsafeBuffer r = h.records;
        r.putLong(at + UcxWire.CONN, conn);
        r.putLong(at + UcxWire.TOKEN, token);
        r.putByte(at + UcxWire.REPLY_TYPE, UcxWire.ACK);
        r.putByte(at + UcxWire.REPLY_CODE, (byte) 0);
        r.putByte(at + UcxWire.REPLY_REASON, (byte) 0);
        r.putByte(at + UcxWire.REPLY_REASON + 1, (byte) 0);
        r.putInt(at + UcxWire.REPLY_LENGTH, 0);
        r.putLong(at + UcxWire.REPLY_VALUE, 0);
        if (++h.count == MAX) {
            send(h);
        }
    }

    /** Sends what the connection holds, if anything: before its next answer, or when its origin asks. */
    void release(long conn) {
        if (holding.isEmpty()) {
            return;
        }
        Held h = byConn.get(conn);
        if (h != null && h.count > 0) {
            send(h);
        }
    }

    /**
     * Sends what was held for the hold or longer.
     *
     * @param now {@code System.nanoTime()}
     */
    void releaseDue(long now) {
        while (!holding.isEmpty() && (now == Long.MAX_VALUE || now - holding.get(0).since >= holdNanos)) {
            send(holding.get(0));
        }
    }

    /** @return when the oldest held answer is due ({@code System.nanoTime()}), or {@code Long.MAX_VALUE} */
    long deadline() {
        return holding.isEmpty() ? Long.MAX_VALUE : holding.get(0).since + holdNanos;
    }

    /** @return whether any answer is held */
    boolean any() {
        return !holding.isEmpty();
    }

    /** The connection closed, or its channel or peer went: what it held is dropped with it. */
    void forget(long conn) {
        Held h = byConn.remove(conn);
        if (h != null && h.count > 0) {
            h.count = 0;
            holding.remove(h);
        }
    }

    private void send(Held h) {
        int n = h.count;
        h.count = 0;
        holding.remove(h);
        out.reply(h.reply, h.records, n * UcxWire.REPLY_HEADER);
    }
}
