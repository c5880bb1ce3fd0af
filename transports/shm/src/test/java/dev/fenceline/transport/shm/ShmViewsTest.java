package dev.fenceline.transport.shm;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.ReadOnlyBufferException;
import org.agrona.concurrent.UnsafeBuffer;
import org.junit.jupiter.api.Test;

/**
 * The views the shm target applies a message through are what the runtime hands a handler as they
 * are: read-only (a handler cannot write the inbox), big-endian, exactly the message's bytes, and a
 * fresh slice for each, over the inbox's buffer or over a copy where the buffer has none.
 */
class ShmViewsTest {
    private final ShmViews views = new ShmViews();

    @Test
    void aViewIsAReadOnlyBigEndianSliceOfTheMessage() {
        ByteBuffer inbox = ByteBuffer.allocateDirect(256).order(ByteOrder.LITTLE_ENDIAN);
        UnsafeBuffer b = new UnsafeBuffer(inbox, 64, 128); // as a ring's buffer: an offset into the mapping
        b.putLong(8, 0x0102030405060708L, ByteOrder.BIG_ENDIAN);
        ByteBuffer first = views.of(b, 8, 8);
        ByteBuffer second = views.of(b, 8, 8);
        assertTrue(first.isReadOnly(), "read-only");
        assertEquals(ByteOrder.BIG_ENDIAN, first.order(), "big-endian, whatever the inbox's order");
        assertEquals(0, first.position());
        assertEquals(8, first.limit(), "exactly the message's bytes");
        assertEquals(0x0102030405060708L, first.getLong(0), "at the message's place in the inbox");
        assertThrows(ReadOnlyBufferException.class, () -> first.put(0, (byte) 1));
        first.getLong(); // the handler moves its view: the next one is its own
        assertNotSame(first, second);
        assertEquals(0, second.position());
    }

    @Test
    void aBufferWithoutAByteBufferIsCopiedReadOnly() {
        UnsafeBuffer heap = new UnsafeBuffer(new byte[32]);
        heap.putLong(16, 42L, ByteOrder.BIG_ENDIAN);
        ByteBuffer v = views.of(heap, 16, 8);
        assertTrue(v.isReadOnly(), "read-only");
        assertEquals(ByteOrder.BIG_ENDIAN, v.order());
        assertEquals(42L, v.getLong(0));
        assertEquals(8, v.remaining());
    }
}
