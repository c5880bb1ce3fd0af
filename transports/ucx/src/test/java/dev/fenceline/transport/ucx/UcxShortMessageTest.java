package dev.fenceline.transport.ucx;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.ArrayList;
import java.util.List;
import org.agrona.concurrent.UnsafeBuffer;
import org.junit.jupiter.api.Test;

/**
 * The SHORT MESSAGE form ({@link UcxWire}): which active messages an origin sends that way, and the
 * target's checks of one, which are those of a MESSAGE request: it runs its handler once with its
 * header and payload and is answered (or its ACK held, as its bit says); a malformed one runs
 * nothing and is refused with the reason where it names a connection, dropped where it does not.
 */
class UcxShortMessageTest {
    private static final byte[] NONE = new byte[0];

    @Test
    void onlyWholeMessagesWithoutAnExactlyOnceNumberWhoseBytesFitGoShort() {
        assertTrue(UcxRequests.goesShort(-1, -1, 0, 7, 0, 8));
        assertTrue(UcxRequests.goesShort(-1, -1, 0, 0, 0, 0));
        assertTrue(UcxRequests.goesShort(-1, -1, 0, UcxWire.SHORT_ID_MAX, 9, 0));
        assertTrue(UcxRequests.goesShort(-1, -1, 0, 7, 4, 5));
        assertFalse(UcxRequests.goesShort(-1, -1, 0, 7, 0, 10), "10 bytes: more than the form carries");
        assertFalse(UcxRequests.goesShort(-1, -1, 0, 7, 5, 5), "10 bytes of header and payload together");
        assertFalse(UcxRequests.goesShort(-1, -1, 0, UcxWire.SHORT_ID_MAX + 1, 0, 8), "an id past 16 bits");
        assertFalse(UcxRequests.goesShort(-1, -1, 0, -1, 0, 8), "a negative id");
        assertFalse(UcxRequests.goesShort(0, -1, 0, 7, 0, 8), "an exactly-once number");
        assertFalse(UcxRequests.goesShort(-1, 0, 0, 7, 0, 8), "a low-water mark");
        assertFalse(UcxRequests.goesShort(-1, -1, 4, 7, 0, 8), "parts already sent");
        // The form's size: all of it within the 36 bytes after UCT's FIFO element header in its first line.
        assertEquals(36, UcxWire.SHORT_HEADER + UcxWire.SHORT_DATA_MAX);
    }

    @Test
    void aShortMessageRunsItsHandlerOnceWithItsHeaderAndPayloadAndIsAnswered() {
        TargetHarness h = new TargetHarness();
        List<byte[]> seen = record(h, 300);
        h.sendShort(Long.MIN_VALUE | 5, 300, new byte[] {1, 2}, new byte[] {3, 4, 5, 6, 7, 8, 9}, false);
        assertEquals(1, seen.size());
        assertArrayEquals(new byte[] {2, 1, 2, 3, 4, 5, 6, 7, 8, 9}, seen.get(0), "header length, header, payload");
        assertEquals(1, h.replies.size(), "answered at once: its bit does not let the ACK wait");
        assertEquals(UcxWire.ACK, h.lastType());
        assertEquals(Long.MIN_VALUE | 5, token(h.replies.get(0)));
    }

    @Test
    void whatTheOriginWritesTheTargetReadsAsWritten() {
        TargetHarness h = new TargetHarness();
        List<byte[]> seen = record(h, 0xfffe); // an id past 15 bits, and a header with the bit beside it
        UnsafeBuffer b = new UnsafeBuffer(new byte[64]);
        ByteBuffer header = ByteBuffer.wrap(new byte[] {9, 1, 2, 3}).position(1); // read from its position
        ByteBuffer payload = ByteBuffer.wrap(new byte[] {4, 5, 6, 7, 8, 9});
        int n = UcxRequests.writeShort(b, TargetHarness.CONN, Long.MIN_VALUE | 3, 99, 0xfffe, header, payload, true);
        assertEquals(UcxWire.SHORT_HEADER + 9, n);
        assertEquals(1, header.position(), "the caller's buffers are not moved");
        assertEquals(0, payload.position());
        h.sendRawShort(java.util.Arrays.copyOf(b.byteArray(), n));
        assertEquals(1, seen.size());
        assertArrayEquals(new byte[] {3, 1, 2, 3, 4, 5, 6, 7, 8, 9}, seen.get(0));
        assertTrue(h.replies.isEmpty(), "its ACK held: the bit was set");
        h.target.answers().releaseAll();
        assertEquals(Long.MIN_VALUE | 3, token(h.replies.get(0)));
    }

    @Test
    void aShortMessageFromARefusedPeerRunsNothingAndIsRefused() {
        TargetHarness h = new TargetHarness();
        List<byte[]> seen = record(h, 1);
        h.windows.refuse(h.peer.id, "its member was downed");
        h.sendShort(4, 1, NONE, new byte[] {1}, true);
        assertEquals(UcxWire.NACK, h.lastType(), "refused at once, whatever its bit says");
        assertTrue(h.lastText().contains("its member was downed"), h.lastText());
        assertTrue(seen.isEmpty());
    }

    @Test
    void aShortMessageWhoseBitSaysSoHasItsAckHeldWithTheOthers() {
        TargetHarness h = new TargetHarness();
        List<byte[]> seen = record(h, 1);
        for (int i = 0; i < UcxHeldAnswers.MAX; i++) {
            h.sendShort(Long.MIN_VALUE | i, 1, NONE, new byte[] {(byte) i}, true);
            if (i < UcxHeldAnswers.MAX - 1) {
                assertTrue(h.replies.isEmpty(), "held until " + UcxHeldAnswers.MAX + " are");
            }
        }
        assertEquals(UcxHeldAnswers.MAX, seen.size());
        assertEquals(1, h.replies.size(), "one message of answers");
        byte[] r = h.replies.get(0);
        assertEquals(UcxHeldAnswers.MAX * UcxWire.REPLY_HEADER, r.length);
        ByteBuffer b = ByteBuffer.wrap(r).order(ByteOrder.nativeOrder());
        for (int i = 0; i < UcxHeldAnswers.MAX; i++) {
            assertEquals(Long.MIN_VALUE | i, b.getLong(i * UcxWire.REPLY_HEADER + UcxWire.TOKEN), "in order");
            assertEquals(UcxWire.ACK, b.get(i * UcxWire.REPLY_HEADER + UcxWire.REPLY_TYPE));
        }
    }

    @Test
    void malformedShortMessagesRunNothingAndAreRefusedWithTheReason() {
        TargetHarness h = new TargetHarness();
        List<byte[]> seen = record(h, 1);
        UnsafeBuffer raw = new UnsafeBuffer(new byte[UcxWire.SHORT_HEADER + 4]);
        raw.putLong(UcxWire.CONN, TargetHarness.CONN);
        raw.putLong(UcxWire.TOKEN, 11);
        raw.putLong(UcxWire.ORIGIN, 99);
        raw.putShort(UcxWire.SHORT_ID, (short) 1);

        h.sendRawShort(java.util.Arrays.copyOf(raw.byteArray(), UcxWire.SHORT_HEADER - 1)); // its header cut short
        assertEquals(UcxWire.NACK, h.lastType());
        assertTrue(h.lastText().contains("less than the 27 of its header"), h.lastText());

        byte[] long10 = new byte[UcxWire.SHORT_HEADER + 10];
        System.arraycopy(raw.byteArray(), 0, long10, 0, UcxWire.SHORT_HEADER);
        h.sendRawShort(long10); // more than the form carries
        assertEquals(UcxWire.NACK, h.lastType());
        assertTrue(h.lastText().contains("10 bytes after its header, more than the 9"), h.lastText());

        raw.putByte(UcxWire.SHORT_BITS, (byte) 5); // a header of 5 bytes in 4
        h.sendRawShort(raw.byteArray());
        assertEquals(UcxWire.NACK, h.lastType());
        assertTrue(h.lastText().contains("header of 5 bytes does not fit its 4"), h.lastText());

        h.sendShort(12, 2, NONE, new byte[] {1}, false); // no handler for id 2
        assertEquals(UcxWire.NACK, h.lastType());
        assertEquals(12, token(h.replies.get(h.replies.size() - 1)));

        int answered = h.replies.size();
        UnsafeBuffer stranger = new UnsafeBuffer(raw.byteArray().clone());
        stranger.putLong(UcxWire.CONN, TargetHarness.CONN + 1);
        stranger.putByte(UcxWire.SHORT_BITS, (byte) 0);
        h.sendRawShort(stranger.byteArray()); // an unknown connection: dropped, nobody to answer
        h.sendRawShort(new byte[15]); // not even a connection and a token
        assertEquals(answered, h.replies.size(), "dropped, not answered");
        assertTrue(seen.isEmpty(), "no handler ran");
    }

    @Test
    void aShortMessageAfterPartsOfAnotherDropsThePartsAndRuns() {
        TargetHarness h = new TargetHarness();
        List<byte[]> seen = record(h, 1);
        UnsafeBuffer r = h.header(UcxWire.PART, 1, 1);
        r.putInt(UcxWire.LENGTH, 500_000);
        r.putLong(UcxWire.ADDRESS, 0);
        h.send(UcxWire.REQUEST_HEADER + 8000);
        assertEquals(8000, h.target.assembling(), "what its bytes take");
        h.sendShort(2, 1, NONE, new byte[] {7}, false);
        assertEquals(0, h.target.assembling(), "the parts that never ended are let go");
        assertEquals(1, seen.size());
        assertEquals(UcxWire.ACK, h.lastType());
    }

    /** @return what the handler of {@code id} is given: the header's length, the header, then the payload */
    private static List<byte[]> record(TargetHarness h, int id) {
        List<byte[]> seen = new ArrayList<>();
        h.memory.setHandler(id, (header, payload) -> {
            byte[] all = new byte[1 + header.remaining() + payload.remaining()];
            all[0] = (byte) header.remaining();
            header.get(all, 1, header.remaining());
            payload.get(all, all.length - payload.remaining(), payload.remaining());
            seen.add(all);
        });
        return seen;
    }

    private static long token(byte[] reply) {
        return ByteBuffer.wrap(reply).order(ByteOrder.nativeOrder()).getLong(UcxWire.TOKEN);
    }
}
