package dev.fenceline.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotSame;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.ByteBuffer;
import java.nio.ReadOnlyBufferException;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import org.junit.jupiter.api.Test;

/**
 * What an active-message handler gets for the transport's buffers: a read-only big-endian view made
 * for the call goes as it is (no second object per message; the handler may move it, as the
 * transport made it for the call), anything else as a read-only big-endian view of its own, so the
 * handler can neither write the transport's memory nor move a buffer the transport keeps, and
 * always reads in the order every fresh buffer has.
 */
class RegistrationTableViewsTest {
    private final List<ByteBuffer> seen = new ArrayList<>();
    private final RegistrationTable table = new RegistrationTable(UUID.randomUUID(), "views");

    RegistrationTableViewsTest() {
        table.setHandler(3, (h, p) -> {
            seen.add(h);
            seen.add(p);
            assertEquals(0x0102030405060708L, p.getLong(), "the payload from its position");
            assertThrows(ReadOnlyBufferException.class, () -> p.put(0, (byte) 9), "the handler cannot write it");
        });
    }

    @Test
    void aReadOnlyViewGoesToTheHandlerAsItIs() {
        ByteBuffer header = ByteBuffer.allocateDirect(4).asReadOnlyBuffer();
        ByteBuffer payload = ByteBuffer.allocateDirect(8).putLong(0, 0x0102030405060708L).asReadOnlyBuffer();
        table.activeMessage(3, header, payload);
        assertEquals(2, seen.size(), "the handler ran");
        assertSame(header, seen.get(0), "the header view itself");
        assertSame(payload, seen.get(1), "the payload view itself");
    }

    @Test
    void aLittleEndianViewGoesAsABigEndianViewOfItsOwn() {
        ByteBuffer header = ByteBuffer.allocateDirect(4).asReadOnlyBuffer();
        ByteBuffer payload = ByteBuffer.allocateDirect(8).putLong(0, 0x0102030405060708L).asReadOnlyBuffer()
                .order(java.nio.ByteOrder.LITTLE_ENDIAN);
        table.activeMessage(3, header, payload);
        assertEquals(2, seen.size(), "the handler ran (reading the payload big-endian)");
        assertSame(header, seen.get(0), "the big-endian header as it is");
        assertNotSame(payload, seen.get(1), "a view of the little-endian payload");
        assertEquals(java.nio.ByteOrder.LITTLE_ENDIAN, payload.order(), "whose own order stays");
    }

    @Test
    void aWritableBufferGoesAsAReadOnlyViewOfItsOwn() {
        ByteBuffer header = ByteBuffer.allocate(4);
        ByteBuffer payload = ByteBuffer.allocateDirect(8).putLong(0, 0x0102030405060708L);
        table.activeMessage(3, header, payload);
        assertEquals(2, seen.size(), "the handler ran");
        assertNotSame(payload, seen.get(1), "a view, not the transport's buffer");
        assertTrue(seen.get(0).isReadOnly() && seen.get(1).isReadOnly(), "both read-only");
        assertEquals(0, payload.position(), "the handler's reading moved its view only");
        assertEquals(0x0102030405060708L, payload.getLong(0), "and wrote nothing");
    }
}
