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
}
