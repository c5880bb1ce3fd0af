package dev.fenceline.transport.ucx;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import org.agrona.concurrent.UnsafeBuffer;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * The target holds back the ACKs of requests flagged {@link UcxWire#ANSWER_MAY_WAIT} and sends them
 * together: sixteen in one message, in order; before any other answer on the connection; when the
 * origin asks; at their deadline; never a fetch's value, never a refusal.
 */
class UcxHeldAnswersTest {
    private final TargetHarness h = new TargetHarness();
    private final AtomicInteger ran = new AtomicInteger();

    @BeforeEach
    void handler() {
        h.memory.setHandler(9, (header, payload) -> ran.incrementAndGet());
    }

    /** A direct active message as the origin's lane sends it: no sequence number, its answer may wait. */
    private void message(long token) {
        UnsafeBuffer r = h.header(UcxWire.MESSAGE, token, -1);
        r.putLong(UcxWire.LOW, -1);
        r.putInt(UcxWire.LENGTH, 9);
        r.putLong(UcxWire.ADDRESS, 0); // whole, not the end of parts
        r.putLong(UcxWire.OPERAND, 0); // no header: 4 bytes of payload
        r.putByte(UcxWire.FLAGS, UcxWire.ANSWER_MAY_WAIT);
        h.send(UcxWire.REQUEST_HEADER + 4);
    }

    /** @return the reply records of one message: token, type */
    private static List<long[]> records(byte[] message) {
        assertEquals(0, message.length % UcxWire.REPLY_HEADER, "whole records of " + UcxWire.REPLY_HEADER + " bytes");
        ByteBuffer b = ByteBuffer.wrap(message).order(ByteOrder.nativeOrder());
        List<long[]> out = new ArrayList<>();
        for (int at = 0; at < message.length; at += UcxWire.REPLY_HEADER) {
            assertEquals(TargetHarness.CONN, b.getLong(at + UcxWire.CONN));
            assertEquals(0, b.getInt(at + UcxWire.REPLY_LENGTH));
            out.add(new long[] {b.getLong(at + UcxWire.TOKEN), b.get(at + UcxWire.REPLY_TYPE)});
        }
        return out;
    }

    @Test
    void sixteenHeldAnswersGoInOneMessageInOrder() {
        for (int t = 1; t <= 15; t++) {
            message(t);
        }
        assertEquals(15, ran.get(), "every handler ran at once");
        assertEquals(0, h.replies.size(), "no answer sent yet");
        assertTrue(h.target.answers().anyHeld());
        message(16);
        assertEquals(1, h.replies.size(), "one message");
        List<long[]> r = records(h.replies.get(0));
        assertEquals(16, r.size());
        for (int i = 0; i < 16; i++) {
            assertEquals(i + 1, r.get(i)[0], "in the order held");
            assertEquals(UcxWire.ACK, r.get(i)[1]);
        }
        assertTrue(!h.target.answers().anyHeld());
    }

    @Test
    void heldAnswersGoBeforeTheNextAnswerOnTheirConnection() {
        message(1);
        message(2);
        h.header(UcxWire.FLUSH, 3, -1);
        h.send(UcxWire.REQUEST_HEADER);
        assertEquals(2, h.replies.size());
        assertEquals(List.of(1L, 2L), records(h.replies.get(0)).stream().map(x -> x[0]).toList());
        assertEquals(UcxWire.FLUSHED, h.lastType());

        message(4);
        UnsafeBuffer r = h.header(UcxWire.GET, 5, 5);
        r.putInt(UcxWire.LENGTH, -1); // refused
        h.send(UcxWire.REQUEST_HEADER);
        assertEquals(4, h.replies.size());
        assertEquals(4L, records(h.replies.get(2)).get(0)[0]);
        assertEquals(UcxWire.NACK, h.lastType());
    }

    @Test
    void expediteSendsWhatIsHeldAndIsNotAnswered() {
        UnsafeBuffer r = h.header(UcxWire.EXPEDITE, 0, -1);
        h.send(UcxWire.REQUEST_HEADER);
        assertEquals(0, h.replies.size(), "nothing held, nothing sent");
        message(1);
        message(2);
        message(3);
        r = h.header(UcxWire.EXPEDITE, 0, -1);
        h.send(UcxWire.REQUEST_HEADER);
        assertEquals(1, h.replies.size());
        assertEquals(List.of(1L, 2L, 3L), records(h.replies.get(0)).stream().map(x -> x[0]).toList());
        assertTrue(!h.target.answers().anyHeld());
    }

    @Test
    void heldAnswersGoAtTheirDeadlineAndNotBefore() {
        assertEquals(Long.MAX_VALUE, h.target.answers().deadline(), "nothing held: no deadline");
        message(1);
        long due = h.target.answers().deadline();
        message(2);
        assertEquals(due, h.target.answers().deadline(), "the oldest answer's deadline");
        h.target.answers().releaseDue(due - 1);
        assertEquals(0, h.replies.size());
        h.target.answers().releaseDue(due);
        assertEquals(1, h.replies.size());
        assertEquals(2, records(h.replies.get(0)).size());
        assertEquals(Long.MAX_VALUE, h.target.answers().deadline());
    }

    @Test
    void aValueOrARefusalIsNeverHeldWhateverTheFlagSays() {
        UnsafeBuffer r = h.header(UcxWire.ATOMIC_FETCH, 1, 1);
        r.putByte(UcxWire.ATOMIC, (byte) 1); // ADD
        r.putByte(UcxWire.WIDTH, (byte) 8);
        r.putLong(UcxWire.OPERAND, 5);
        r.putByte(UcxWire.FLAGS, UcxWire.ANSWER_MAY_WAIT);
        h.send(UcxWire.REQUEST_HEADER);
        h.send(UcxWire.REQUEST_HEADER); // a copy: the first one's old value, again at once
        assertEquals(2, h.replies.size());
        assertEquals(0, h.lastValue());
        r = h.header(UcxWire.MESSAGE, 2, -1);
        r.putLong(UcxWire.LOW, -1);
        r.putInt(UcxWire.LENGTH, 77); // no such handler
        r.putLong(UcxWire.ADDRESS, 0);
        r.putByte(UcxWire.FLAGS, UcxWire.ANSWER_MAY_WAIT);
        h.send(UcxWire.REQUEST_HEADER);
        assertEquals(3, h.replies.size());
        assertEquals(UcxWire.NACK, h.lastType());
        assertTrue(!h.target.answers().anyHeld());
    }

    @Test
    void aClosedConnectionDropsWhatItHeld() {
        message(1);
        h.target.close(TargetHarness.CONN);
        assertTrue(!h.target.answers().anyHeld());
        h.target.answers().releaseDue(Long.MAX_VALUE);
        assertEquals(0, h.replies.size(), "its origin's lane is gone: nobody reads them");
    }

    @Test
    void nothingIsHeldUntilTheAgentSleepsOnItsOwnThreadOrWithAHoldOfZero() {
        for (long hold : new long[] {3_600_000_000_000L, 0}) {
            List<byte[]> sent = new ArrayList<>();
            UcxTarget t = new UcxTarget("b", h.memory, h.windows, 8192, 1 << 20, 10_000_000_000L, hold,
                    (c, b, n) -> sent.add(new byte[n]));
            t.open(TargetHarness.CONN, new UcxIncoming(h.peer, null, Integer.MAX_VALUE));
            if (hold == 0) {
                t.answers().holdFromNowOn(); // enabled, but a hold of zero holds nothing
            }
            UnsafeBuffer r = h.header(UcxWire.MESSAGE, 1, -1);
            r.putLong(UcxWire.LOW, -1);
            r.putInt(UcxWire.LENGTH, 9);
            r.putLong(UcxWire.ADDRESS, 0);
            r.putByte(UcxWire.FLAGS, UcxWire.ANSWER_MAY_WAIT);
            t.onRequest(r, 0, UcxWire.REQUEST_HEADER);
            assertEquals(1, sent.size(), "answered at once (hold " + hold + ")");
            assertTrue(!t.answers().anyHeld());
        }
    }

    @Test
    void aClosingWorkerSendsEverythingItHolds() {
        message(1);
        message(2);
        h.target.answers().releaseAll();
        assertEquals(1, h.replies.size());
        assertEquals(2, records(h.replies.get(0)).size());
        assertTrue(!h.target.answers().anyHeld());
    }

    @Test
    void putsAndPostedAtomicsAreHeldTooAndApplied() {
        h.region.buffer().order(ByteOrder.nativeOrder()).putLong(8, 40);
        UnsafeBuffer r = h.header(UcxWire.ATOMIC_POST, 1, 1);
        r.putByte(UcxWire.ATOMIC, (byte) 1); // ADD: its old value (40) goes nowhere
        r.putByte(UcxWire.WIDTH, (byte) 8);
        r.putLong(UcxWire.ADDRESS, h.region.address() + 8);
        r.putLong(UcxWire.OPERAND, 2);
        r.putByte(UcxWire.FLAGS, UcxWire.ANSWER_MAY_WAIT);
        h.send(UcxWire.REQUEST_HEADER);
        r = h.header(UcxWire.PUT, 2, 2);
        r.putLong(UcxWire.REQUEST_HEADER, 77);
        r.putByte(UcxWire.FLAGS, UcxWire.ANSWER_MAY_WAIT);
        h.send(UcxWire.REQUEST_HEADER + 8);
        assertEquals(0, h.replies.size(), "both held");
        assertEquals(42, h.region.buffer().order(ByteOrder.nativeOrder()).getLong(8), "applied at once");
        assertEquals(77, h.region.buffer().order(ByteOrder.nativeOrder()).getLong(0));
        h.target.answers().releaseAll();
        assertEquals(List.of(1L, 2L), records(h.replies.get(0)).stream().map(x -> x[0]).toList());
    }
}
