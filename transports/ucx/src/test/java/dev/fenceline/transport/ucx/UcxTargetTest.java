package dev.fenceline.transport.ucx;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.ByteOrder;
import org.agrona.concurrent.UnsafeBuffer;
import org.junit.jupiter.api.Test;

/**
 * The target side of the software protocol: requests applied once per (peer, origin endpoint,
 * sequence) and answered; malformed ones refused with the reason where they name a connection, and
 * dropped where they do not; nothing written by a refused request.
 */
class UcxTargetTest {
    @Test
    void aPutIsAppliedOnceAndACopySentAgainIsAnsweredWithoutApplying() {
        TargetHarness h = new TargetHarness();
        UnsafeBuffer r = h.header(UcxWire.PUT, 1, 5);
        r.putLong(UcxWire.REQUEST_HEADER, 77);
        h.send(UcxWire.REQUEST_HEADER + 8);
        assertEquals(UcxWire.ACK, h.lastType());
        assertEquals(77, h.region.buffer().order(ByteOrder.nativeOrder()).getLong(0));
        h.region.buffer().order(ByteOrder.nativeOrder()).putLong(0, 1);
        h.send(UcxWire.REQUEST_HEADER + 8); // the same sequence number again
        assertEquals(UcxWire.ACK, h.lastType());
        assertEquals(1, h.region.buffer().order(ByteOrder.nativeOrder()).getLong(0), "not applied twice");
    }

    @Test
    void aFetchingAtomicAnswersTheOldValueOnceEvenWhenSentAgain() {
        TargetHarness h = new TargetHarness();
        UnsafeBuffer r = h.header(UcxWire.ATOMIC_FETCH, 2, 6);
        r.putByte(UcxWire.ATOMIC, (byte) 1); // ADD
        r.putByte(UcxWire.WIDTH, (byte) 8);
        r.putLong(UcxWire.OPERAND, 5);
        h.send(UcxWire.REQUEST_HEADER);
        assertEquals(0, h.lastValue());
        h.send(UcxWire.REQUEST_HEADER);
        assertEquals(0, h.lastValue(), "the first copy's result");
        assertEquals(5, h.region.buffer().order(ByteOrder.nativeOrder()).getLong(0));
    }

    @Test
    void aGetReturnsTheBytesAndAFlushIsAnswered() {
        TargetHarness h = new TargetHarness();
        h.region.buffer().put(3, (byte) 42);
        UnsafeBuffer r = h.header(UcxWire.GET, 3, 7);
        r.putInt(UcxWire.LENGTH, 16);
        h.send(UcxWire.REQUEST_HEADER);
        assertEquals(UcxWire.DATA, h.lastType());
        assertEquals(42, h.replies.get(h.replies.size() - 1)[UcxWire.REPLY_HEADER + 3]);
        h.header(UcxWire.FLUSH, 4, -1);
        h.send(UcxWire.REQUEST_HEADER);
        assertEquals(UcxWire.FLUSHED, h.lastType());
    }

    /**
     * A get whose reply the connection's channel cannot carry in one active message (its iface's limit
     * is below the worker's largest, which sizes the reply buffer) is refused alone: sent, the reply
     * would fail the channel and every lane on it.
     */
    @Test
    void aGetLongerThanTheReplyChannelCarriesIsRefusedAlone() {
        TargetHarness h = new TargetHarness();
        long conn = 7;
        h.target.open(conn, new UcxIncoming(h.peer, null, 1000));
        assertTrue(h.target.maxGet() > 2000, "the worker-wide bound alone would let it through: " + h.target.maxGet());
        UnsafeBuffer r = h.header(UcxWire.GET, 1, 1);
        r.putLong(UcxWire.CONN, conn);
        r.putInt(UcxWire.LENGTH, 2000);
        h.send(UcxWire.REQUEST_HEADER);
        assertEquals(UcxWire.NACK, h.lastType());
        assertTrue(h.lastText().contains("a get of 2000 bytes; one reply on this connection's channel carries at most"
                + " 1000"), h.lastText());
        r = h.header(UcxWire.GET, 2, 2);
        r.putLong(UcxWire.CONN, conn);
        r.putInt(UcxWire.LENGTH, 1000);
        h.send(UcxWire.REQUEST_HEADER);
        assertEquals(UcxWire.DATA, h.lastType(), "one that fits is answered on the same connection");
        assertEquals(UcxWire.REPLY_HEADER + 1000, h.replies.get(h.replies.size() - 1).length);
    }

    @Test
    void malformedRequestsAreRefusedWithTheReasonAndWriteNothing() {
        TargetHarness h = new TargetHarness();
        h.header(UcxWire.PUT, 1, 1);
        h.send(40); // shorter than its header
        assertEquals(UcxWire.NACK, h.lastType());
        assertTrue(h.lastText().contains("less than the 80"), h.lastText());
        UnsafeBuffer r = h.header(UcxWire.GET, 2, 2);
        r.putInt(UcxWire.LENGTH, -5);
        h.send(UcxWire.REQUEST_HEADER);
        assertTrue(h.lastText().contains("a get of -5 bytes"), h.lastText());
        r = h.header(UcxWire.MESSAGE, 3, 3);
        r.putLong(UcxWire.ADDRESS, 0); // whole, not the end of parts
        r.putLong(UcxWire.OPERAND, 1 << 20); // a header longer than the message
        h.send(UcxWire.REQUEST_HEADER + 4);
        assertTrue(h.lastText().contains("does not fit"), h.lastText());
        r = h.header(UcxWire.ATOMIC_POST, 4, 4);
        r.putByte(UcxWire.ATOMIC, (byte) 9);
        r.putByte(UcxWire.WIDTH, (byte) 8);
        h.send(UcxWire.REQUEST_HEADER);
        assertTrue(h.lastText().contains("unknown operation code 9"), h.lastText());
        r = h.header((byte) 42, 5, 5);
        h.send(UcxWire.REQUEST_HEADER);
        assertTrue(h.lastText().contains("unknown kind 42"), h.lastText());
        r = h.header(UcxWire.PUT, 6, 6);
        r.putLong(UcxWire.ADDRESS, h.region.address() + 4090);
        h.send(UcxWire.REQUEST_HEADER + 64);
        assertTrue(h.lastText().contains("outside region"), h.lastText());
        int replies = h.replies.size();
        h.sendRaw(new byte[] {1, 2, 3}); // names no connection: dropped
        r = h.header(UcxWire.PUT, 7, 7);
        r.putLong(UcxWire.CONN, 1); // an unknown connection: dropped
        h.send(UcxWire.REQUEST_HEADER + 8);
        assertEquals(replies, h.replies.size(), "nothing answers a request on no known connection");
        for (int i = 0; i < 4096; i++) {
            assertEquals(0, h.region.buffer().get(i), "byte " + i + " written by a refused request");
        }
    }

    /** -1 means "without exactly-once"; a number below it is nothing the protocol sends: refused, naming it. */
    @Test
    void aSequenceNumberOrLowWaterMarkBelowMinusOneIsRefusedAndWritesNothing() {
        TargetHarness h = new TargetHarness();
        UnsafeBuffer r = h.header(UcxWire.PUT, 1, -5);
        r.putLong(UcxWire.REQUEST_HEADER, 77);
        h.send(UcxWire.REQUEST_HEADER + 8);
        assertEquals(UcxWire.NACK, h.lastType());
        assertTrue(h.lastText().contains("sequence number -5"), h.lastText());
        r = h.header(UcxWire.PUT, 2, 3);
        r.putLong(UcxWire.LOW, Long.MIN_VALUE);
        r.putLong(UcxWire.REQUEST_HEADER, 77);
        h.send(UcxWire.REQUEST_HEADER + 8);
        assertEquals(UcxWire.NACK, h.lastType());
        assertTrue(h.lastText().contains("low-water mark " + Long.MIN_VALUE), h.lastText());
        assertEquals(0, h.region.buffer().order(ByteOrder.nativeOrder()).getLong(0), "written by a refused put");
        r = h.header(UcxWire.PUT, 3, -1); // without exactly-once: applied
        r.putLong(UcxWire.REQUEST_HEADER, 77);
        h.send(UcxWire.REQUEST_HEADER + 8);
        assertEquals(UcxWire.ACK, h.lastType());
        assertEquals(77, h.region.buffer().order(ByteOrder.nativeOrder()).getLong(0));
    }

    @Test
    void aConnectionClosedWithByeTakesNoMoreRequests() {
        TargetHarness h = new TargetHarness();
        h.target.close(TargetHarness.CONN);
        UnsafeBuffer r = h.header(UcxWire.PUT, 1, 1);
        r.putLong(UcxWire.REQUEST_HEADER, 5);
        h.send(UcxWire.REQUEST_HEADER + 8);
        assertTrue(h.replies.isEmpty());
        assertEquals(0, h.region.buffer().get(0));
        assertEquals(0, h.peer.incoming);
    }

    /** Sends a message of {@code total} bytes (an 8-byte header, then payload byte i = i) in parts of {@code part}. */
    private static void inParts(TargetHarness h, long token, long seq, int total, int part) {
        int sent = 0;
        while (total - sent > part) {
            UnsafeBuffer r = h.header(UcxWire.PART, token, seq);
            r.putInt(UcxWire.LENGTH, total);
            r.putLong(UcxWire.ADDRESS, sent);
            fill(r, sent, part);
            h.send(UcxWire.REQUEST_HEADER + part);
            sent += part;
        }
        UnsafeBuffer r = h.header(UcxWire.MESSAGE, token, seq);
        r.putInt(UcxWire.LENGTH, 9); // the handler id
        r.putLong(UcxWire.OPERAND, 8);
        r.putLong(UcxWire.ADDRESS, sent);
        fill(r, sent, total - sent);
        h.send(UcxWire.REQUEST_HEADER + total - sent);
    }

    private static void fill(UnsafeBuffer r, int from, int n) {
        for (int i = 0; i < n; i++) {
            r.putByte(UcxWire.REQUEST_HEADER + i, (byte) (from + i));
        }
    }

    @Test
    void aMessageInPartsRunsItsHandlerOnceWithEveryByteAndIsAnsweredOnce() {
        TargetHarness h = new TargetHarness();
        java.util.List<byte[]> seen = new java.util.ArrayList<>();
        h.memory.setHandler(9, (header, payload) -> {
            byte[] all = new byte[header.remaining() + payload.remaining()];
            header.get(all, 0, header.remaining());
            payload.get(all, 8, payload.remaining());
            seen.add(all);
        });
        int total = 100_000;
        inParts(h, 1, 1, total, 8000);
        assertEquals(1, h.replies.size(), "only the MESSAGE is answered");
        assertEquals(UcxWire.ACK, h.lastType(), h.replies.isEmpty() ? "" : h.lastText());
        assertEquals(1, seen.size());
        for (int i = 0; i < total; i++) {
            assertEquals((byte) i, seen.get(0)[i], "byte " + i);
        }
        inParts(h, 2, 1, total, 8000); // the same message sent again (same sequence): not run again
        assertEquals(UcxWire.ACK, h.lastType());
        assertEquals(1, seen.size(), "a copy sent again runs no handler");
        assertEquals(0, h.target.assembling(), "nothing held once the messages ended");
    }

    @Test
    void aMessageWhosePartsAreBadIsRefusedWithTheReasonAndRunsNothing() {
        TargetHarness h = new TargetHarness();
        java.util.concurrent.atomic.AtomicInteger ran = new java.util.concurrent.atomic.AtomicInteger();
        h.memory.setHandler(9, (header, payload) -> ran.incrementAndGet());
        // Larger than the target's bound (1 MiB in the harness).
        inParts(h, 1, 1, (1 << 20) + 8000, 8000);
        assertEquals(UcxWire.NACK, h.lastType());
        assertTrue(h.lastText().contains("exceeds this worker's limit of 1048576"), h.lastText());
        // A part skipped.
        UnsafeBuffer r = h.header(UcxWire.PART, 2, 2);
        r.putInt(UcxWire.LENGTH, 30_000);
        r.putLong(UcxWire.ADDRESS, 0);
        h.send(UcxWire.REQUEST_HEADER + 8000);
        r = h.header(UcxWire.PART, 2, 2);
        r.putInt(UcxWire.LENGTH, 30_000);
        r.putLong(UcxWire.ADDRESS, 16_000);
        h.send(UcxWire.REQUEST_HEADER + 8000);
        r = h.header(UcxWire.MESSAGE, 2, 2);
        r.putLong(UcxWire.OPERAND, 8);
        r.putLong(UcxWire.ADDRESS, 24_000);
        h.send(UcxWire.REQUEST_HEADER + 6000);
        assertEquals(UcxWire.NACK, h.lastType());
        assertTrue(h.lastText().contains("at byte 16000 of an active message of 30000 with 8000 so far"), h.lastText());
        // An end whose parts never came.
        r = h.header(UcxWire.MESSAGE, 3, 3);
        r.putLong(UcxWire.OPERAND, 8);
        r.putLong(UcxWire.ADDRESS, 5000);
        h.send(UcxWire.REQUEST_HEADER + 100);
        assertTrue(h.lastText().contains("whose parts never came"), h.lastText());
        // An end that claims more bytes than its parts declared.
        inParts(h, 4, 4, 20_000, 8000);
        assertEquals(UcxWire.ACK, h.lastType());
        r = h.header(UcxWire.PART, 5, 5);
        r.putInt(UcxWire.LENGTH, 20_000);
        r.putLong(UcxWire.ADDRESS, 0);
        h.send(UcxWire.REQUEST_HEADER + 8000);
        r = h.header(UcxWire.MESSAGE, 5, 5);
        r.putLong(UcxWire.OPERAND, 8);
        r.putLong(UcxWire.ADDRESS, 8000);
        h.send(UcxWire.REQUEST_HEADER + 13_000);
        assertTrue(h.lastText().contains("the end of an active message of 20000 bytes"), h.lastText());
        assertEquals(1, ran.get(), "only the good message ran");
        assertEquals(5, h.replies.size(), "one answer per message, none per part");
        assertEquals(0, h.target.assembling());
    }

    /**
     * A copy of a message that ran, sent again in parts that cannot be assembled (its first part was
     * refused for room, say): it gets the first copy's outcome, never "not applied"; a new message in
     * the same state is refused with the reason and runs nothing.
     */
    @Test
    void aCopyOfAMessageThatRanIsNeverToldItDidNotWhenItCannotBeAssembled() {
        TargetHarness h = new TargetHarness();
        java.util.concurrent.atomic.AtomicInteger ran = new java.util.concurrent.atomic.AtomicInteger();
        h.memory.setHandler(9, (header, payload) -> ran.incrementAndGet());
        inParts(h, 1, 7, 20_000, 8000);
        assertEquals(UcxWire.ACK, h.lastType());
        assertEquals(1, ran.get());
        UnsafeBuffer r = h.header(UcxWire.MESSAGE, 2, 7); // its parts never came
        r.putInt(UcxWire.LENGTH, 9);
        r.putLong(UcxWire.OPERAND, 8);
        r.putLong(UcxWire.ADDRESS, 16_000);
        h.send(UcxWire.REQUEST_HEADER + 4000);
        assertEquals(UcxWire.ACK, h.lastType(), "the copy of a message that ran: " + h.lastText());
        r = h.header(UcxWire.MESSAGE, 3, 8);
        r.putInt(UcxWire.LENGTH, 9);
        r.putLong(UcxWire.OPERAND, 8);
        r.putLong(UcxWire.ADDRESS, 16_000);
        h.send(UcxWire.REQUEST_HEADER + 4000);
        assertEquals(UcxWire.NACK, h.lastType());
        assertTrue(h.lastText().contains("whose parts never came"), h.lastText());
        assertEquals(1, ran.get(), "nothing ran again");
    }

    @Test
    void aConnectionThatGoesWithAMessageHalfSentHoldsNothing() {
        TargetHarness h = new TargetHarness();
        UnsafeBuffer r = h.header(UcxWire.PART, 1, 1);
        r.putInt(UcxWire.LENGTH, 500_000);
        r.putLong(UcxWire.ADDRESS, 0);
        h.send(UcxWire.REQUEST_HEADER + 8000);
        assertEquals(8000, h.target.assembling(), "the room its bytes take");
        assertTrue(h.replies.isEmpty(), "a part is not answered");
        h.target.close(TargetHarness.CONN);
        assertEquals(0, h.target.assembling());
    }

    /** Messages in parts of many peers (one connection each) together are bounded by the worker's room. */
    @Test
    void messagesInPartsOfAllConnectionsTogetherAreBounded() {
        TargetHarness h = new TargetHarness();
        long conns = UcxAssemblies.MAX_ASSEMBLING / 1_000_000 + 1;
        for (long c = 2; c < 2 + conns; c++) {
            startMessage(h, c, new UcxPeer(java.util.UUID.randomUUID(), h.peer.address));
        }
        assertEquals(UcxAssemblies.MAX_ASSEMBLING / 1_000_000 * 1_000_000, h.target.assembling(),
                "as many whole messages as fit; the rest gave back what they held");
        endMessage(h, 1 + conns);
        assertTrue(h.lastText().contains("would pass the bound of " + UcxAssemblies.MAX_ASSEMBLING), h.lastText());
    }

    /**
     * One peer's connections, each with a message in parts, take at most one peer's share of the room
     * (an eighth of it, or one whole message if that is larger); another peer's message still
     * assembles, and the first peer's room comes back as its messages end.
     */
    @Test
    void onePeersMessagesInPartsCannotTakeTheOthersRoom() {
        TargetHarness h = new TargetHarness();
        long share = UcxAssemblies.MAX_ASSEMBLING / 8;
        long conns = share / 1_000_000 + 4;
        for (long c = 2; c < 2 + conns; c++) {
            startMessage(h, c, h.peer);
        }
        assertEquals(share / 1_000_000 * 1_000_000, h.target.assembling(), "one peer's share, in whole messages");
        endMessage(h, 1 + conns);
        assertTrue(h.lastText().contains("would pass one peer's bound of " + share), h.lastText());

        startMessage(h, 1000, new UcxPeer(java.util.UUID.randomUUID(), h.peer.address));
        assertEquals(share / 1_000_000 * 1_000_000 + 1_000_000, h.target.assembling(), "the other peer's message is held");

        h.target.close(2); // one of the first peer's ends half-sent: its room is the peer's again
        assertEquals(share / 1_000_000 * 1_000_000 - 1_000_000, h.peer.assembling);
    }

    /**
     * Opens a connection of the peer's and sends the first 72,000 bytes of a 1,000,000-byte message on
     * it: past a sixteenth and past what doubling allocated, so that it holds room for the whole message.
     */
    private static void startMessage(TargetHarness h, long conn, UcxPeer peer) {
        h.target.open(conn, new UcxIncoming(peer, null, Integer.MAX_VALUE));
        for (int offset = 0; offset < 72_000; offset += 8000) {
            UnsafeBuffer r = h.header(UcxWire.PART, conn, conn);
            r.putLong(UcxWire.CONN, conn);
            r.putInt(UcxWire.LENGTH, 1_000_000);
            r.putLong(UcxWire.ADDRESS, offset);
            h.send(UcxWire.REQUEST_HEADER + 8000);
        }
    }

    /**
     * Sends a MESSAGE on the connection (100 bytes at byte 8,000, which ends no message {@link
     * #startMessage} began): answered only with why the message was refused.
     */
    private static void endMessage(TargetHarness h, long conn) {
        UnsafeBuffer r = h.header(UcxWire.MESSAGE, conn, conn);
        r.putLong(UcxWire.CONN, conn);
        r.putLong(UcxWire.OPERAND, 8);
        r.putLong(UcxWire.ADDRESS, 8000);
        h.send(UcxWire.REQUEST_HEADER + 100);
    }
}
