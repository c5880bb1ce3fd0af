package dev.fenceline.spi.support;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/** Puts and gets copy bytes exactly, whatever the buffers' kinds, orders and alignment (8 bytes is one store). */
class MappedMemoryTest {
    private static byte[] pattern(int n) {
        byte[] b = new byte[n];
        for (int i = 0; i < n; i++) {
            b[i] = (byte) (0x11 * (i + 1) + 3);
        }
        return b;
    }

    private static ByteBuffer source(byte[] bytes, boolean direct, ByteOrder order, int position) {
        ByteBuffer b = (direct ? ByteBuffer.allocateDirect(position + bytes.length + 5)
                : ByteBuffer.allocate(position + bytes.length + 5)).order(order);
        b.position(position);
        b.put(bytes);
        b.position(position).limit(position + bytes.length);
        return b;
    }

    @ParameterizedTest
    @ValueSource(ints = {1, 7, 8, 9, 64})
    void putCopiesTheBytesAtAnyAlignmentAndOrder(int n) {
        byte[] bytes = pattern(n);
        for (boolean direct : new boolean[] {true, false}) {
            for (ByteOrder order : new ByteOrder[] {ByteOrder.BIG_ENDIAN, ByteOrder.LITTLE_ENDIAN}) {
                for (int at : new int[] {0, 3, 8}) {
                    ByteBuffer mapping = ByteBuffer.allocateDirect(96).order(ByteOrder.nativeOrder());
                    ByteBuffer src = source(bytes, direct, order, 5);
                    MappedMemory.put(mapping, at, src);
                    byte[] out = new byte[n];
                    mapping.get(at, out);
                    String where = "direct " + direct + ", " + order + ", at " + at;
                    assertArrayEquals(bytes, out, where);
                    assertEquals(5, src.position(), "the source is not moved: " + where);
                    assertEquals(0, mapping.get(at + n), "nothing written past the put: " + where);
                    if (at > 0) {
                        assertEquals(0, mapping.get(at - 1), "nothing written before the put: " + where);
                    }
                }
            }
        }
    }

    @ParameterizedTest
    @ValueSource(ints = {1, 8, 9})
    void getCopiesTheBytesIntoAnyBuffer(int n) {
        byte[] bytes = pattern(n);
        ByteBuffer mapping = ByteBuffer.allocateDirect(64);
        mapping.put(11, bytes);
        for (boolean direct : new boolean[] {true, false}) {
            for (ByteOrder order : new ByteOrder[] {ByteOrder.BIG_ENDIAN, ByteOrder.LITTLE_ENDIAN}) {
                ByteBuffer dst = source(new byte[n], direct, order, 3);
                MappedMemory.get(mapping, 11, dst);
                byte[] out = new byte[n];
                dst.get(3, out);
                assertArrayEquals(bytes, out, "direct " + direct + ", " + order);
                assertEquals(3, dst.position(), "the destination is not moved");
            }
        }
    }

    @ParameterizedTest
    @ValueSource(ints = {7, 8, 9})
    void anAccessPastTheMappingIsRefusedNotWritten(int n) {
        ByteBuffer mapping = ByteBuffer.allocateDirect(16);
        assertThrows(IndexOutOfBoundsException.class,
                () -> MappedMemory.put(mapping, 16 - n + 1, source(pattern(n), false, ByteOrder.BIG_ENDIAN, 0)));
        for (int i = 0; i < 16; i++) {
            assertEquals(0, mapping.get(i), "byte " + i);
        }
        assertThrows(IndexOutOfBoundsException.class,
                () -> MappedMemory.get(mapping, 16 - n + 1, ByteBuffer.allocate(n)));
    }
}
