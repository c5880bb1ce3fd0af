package dev.fenceline.transport.ucx;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotSame;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.ByteBuffer;
import org.junit.jupiter.api.Test;

/**
 * A direct message from a calling thread keeps copies of its bytes ({@link UcxOp#copy}): exactly the
 * bytes from position to limit, the caller's buffer not moved, and nothing allocated for an empty
 * part.
 */
class UcxOpCopyTest {
    @Test
    void aCopyHoldsTheBytesBetweenPositionAndLimitAndLeavesTheSourceAsItWas() {
        for (ByteBuffer src : new ByteBuffer[] {ByteBuffer.allocate(32), ByteBuffer.allocateDirect(32)}) {
            for (int i = 0; i < 32; i++) {
                src.put(i, (byte) i);
            }
            src.position(5).limit(17);
            ByteBuffer c = UcxOp.copy(src);
            assertEquals(5, src.position(), "the source's position is not moved");
            assertEquals(17, src.limit());
            assertEquals(0, c.position());
            assertEquals(12, c.remaining());
            for (int i = 0; i < 12; i++) {
                assertEquals(5 + i, c.get(i), "byte " + i);
            }
            src.put(5, (byte) 99);
            assertEquals(5, c.get(0), "a copy, not a view: the caller may reuse its buffer");
        }
    }

    @Test
    void emptyPartsShareOneReadOnlyEmptyBuffer() {
        ByteBuffer a = UcxOp.copy(ByteBuffer.allocate(0));
        ByteBuffer b = UcxOp.copy(ByteBuffer.allocate(16).position(16));
        assertSame(a, b, "nothing to copy, nothing allocated");
        assertEquals(0, a.remaining());
        assertTrue(a.isReadOnly(), "shared, so nobody can write into it");
        assertNotSame(a, UcxOp.copy(ByteBuffer.allocate(1)));
    }
}
