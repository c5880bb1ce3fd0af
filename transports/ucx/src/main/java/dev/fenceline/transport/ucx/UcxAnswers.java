package dev.fenceline.transport.ucx;

import dev.fenceline.FencelineException;
import dev.fenceline.spi.support.WireCodes;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import org.agrona.concurrent.UnsafeBuffer;

/**
 * The target's answers ({@link UcxWire} REPLY), each written into one reply buffer and sent on its
 * connection's reply channel after the ACKs the connection holds (its origin takes answers in
 * order); the ACKs nobody waits for one by one are held to go several in one message
 * ({@link UcxHeldAnswers}). Progress agent only.
 */
final class UcxAnswers {
    private final UcxTarget.Replies replies;
    private final UcxHeldAnswers held;
    private final ByteBuffer outBuffer;
    private final UnsafeBuffer out;

    /**
     * @param maxReply the largest reply a reply channel carries
     * @param answerHoldNanos how long ACKs nobody waits for one by one may be held back
     * @param replies sends a reply
     */
    UcxAnswers(int maxReply, long answerHoldNanos, UcxTarget.Replies replies) {
        this.replies = replies;
        this.held = new UcxHeldAnswers(replies, answerHoldNanos);
        this.outBuffer = ByteBuffer.allocateDirect(Math.max(maxReply, UcxWire.REPLY_HEADER + UcxWire.MAX_TEXT))
                .order(java.nio.ByteOrder.nativeOrder());
        this.out = new UnsafeBuffer(outBuffer);
    }

    /** @return the largest get a reply carries */
    int maxGet() {
        return out.capacity() - UcxWire.REPLY_HEADER;
    }

    /**
     * @param n a get's bytes, at most {@link #maxGet()}
     * @return where they go: the data of the reply {@link #data} sends next
     */
    ByteBuffer dataSpace(int n) {
        return outBuffer.duplicate().position(UcxWire.REPLY_HEADER).limit(UcxWire.REPLY_HEADER + n).slice();
    }

    /** Sends the DATA reply whose {@code n} bytes are in {@link #dataSpace}. */
    void data(UcxChannel reply, long conn, long token, int n) {
        header(conn, token, UcxWire.DATA, 0, 0, n, 0);
        send(reply, conn, UcxWire.REPLY_HEADER + n);
    }

    /** Sends a reply without data: an ACK with its value, or FLUSHED. */
    void reply(UcxChannel reply, long conn, long token, byte type, long value) {
        header(conn, token, type, 0, 0, 0, value);
        send(reply, conn, UcxWire.REPLY_HEADER);
    }

    /**
     * An operation was applied: its ACK, held where its origin let it wait and answers are held now.
     *
     * @param mayWait whether the request let the ACK wait (and it carries no value)
     */
    void applied(UcxChannel reply, long conn, long token, boolean mayWait, long value) {
        if (mayWait && held.holds()) {
            held.hold(conn, reply, token);
        } else {
            reply(reply, conn, token, UcxWire.ACK, value);
        }
    }

    /** Refuses a request: its reason's codes and (at most {@link UcxWire#MAX_TEXT} bytes of) its text. */
    void nack(UcxChannel reply, long conn, long token, FencelineException e) {
        byte[] text = String.valueOf(e.getMessage()).getBytes(StandardCharsets.UTF_8);
        int n = Math.min(text.length, UcxWire.MAX_TEXT);
        if (reply != null) { // the refusal must fit the channel too, or sending it would fail the channel
            n = Math.max(0, Math.min(n, reply.amMax - UcxWire.REPLY_HEADER));
        }
        header(conn, token, UcxWire.NACK, WireCodes.errorCode(e), WireCodes.reasonCode(e), n, 0);
        out.putBytes(UcxWire.REPLY_HEADER, text, 0, n);
        send(reply, conn, UcxWire.REPLY_HEADER + n);
    }

    /** Sends what the connection holds now (its origin asked: EXPEDITE). */
    void release(long conn) {
        held.release(conn);
    }

    /** The connection went: what it held is dropped with it. */
    void forget(long conn) {
        held.forget(conn);
    }

    /** From now on ACKs may be held back (the agent runs on its own thread, which keeps their deadline). */
    void holdFromNowOn() {
        held.enable();
    }

    /** @return whether ACKs are held back now */
    boolean anyHeld() {
        return held.any();
    }

    /** @return when the oldest held ACK is due ({@code System.nanoTime()}), or {@code Long.MAX_VALUE} */
    long deadline() {
        return held.deadline();
    }

    /** @param now {@code System.nanoTime()}: sends the held ACKs that are due */
    void releaseDue(long now) {
        held.releaseDue(now);
    }

    /** Sends every held ACK (the worker closes). */
    void releaseAll() {
        held.releaseDue(Long.MAX_VALUE);
    }

    /** Sends the reply in {@code out}, after the ACKs the connection holds. */
    private void send(UcxChannel reply, long conn, int length) {
        held.release(conn);
        replies.reply(reply, out, length);
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
}
