package dev.fenceline.transport.shm;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import dev.fenceline.AtomicOp;
import dev.fenceline.RemoteAccessException;
import dev.fenceline.RemoteAccessException.Reason;
import dev.fenceline.RemoteKey;
import dev.fenceline.spi.TransportOp;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.MappedByteBuffer;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.function.Executable;
import org.junit.jupiter.api.io.TempDir;

/**
 * The segment's own bound, which the accesses by address rest on: a key may claim more than the
 * segment holds (its owner's word), and whatever passes the key's check, every direct access (the
 * calling thread's and the actor's {@code apply}) lands inside the segment's data or is refused as
 * out of bounds, with the owner's header and data untouched.
 */
class DirectBoundsTest {
    private static final long KEY_ID = 0x5eed_0000_0001L;
    private static final long BASE = 1L << 40;
    private static final int LENGTH = 4096;

    @TempDir
    Path dir;

    @Test
    void aKeyClaimingMoreThanTheSegmentReachesNothingPastIt() throws Exception {
        Path file = dir.resolve(Segments.processPrefix() + "segment");
        DataSegment owner = DataSegment.create(file, LENGTH, true, () -> { });
        owner.registered(KEY_ID);
        DataSegment.Peer seg = DataSegment.map(file, true);
        MappedByteBuffer whole = Segments.open(file, true);
        ByteBuffer headerBefore = ByteBuffer.allocate(DataSegment.HEADER).put(whole.duplicate().limit(DataSegment.HEADER));
        // The key's range is 1 MiB from the same base: its own check passes anywhere in it.
        RemoteKey wide = new RemoteKey(UUID.randomUUID(), KEY_ID, BASE, 1 << 20, Map.of());
        ByteBuffer eight = ByteBuffer.allocateDirect(8).order(ByteOrder.nativeOrder()).putLong(0, -1L);

        for (long past : List.of((long) LENGTH, LENGTH - 4L, 8192L, (1L << 20) - 8)) {
            long address = BASE + past;
            wide.checkBounds(address, 8); // the key's check passes: only the segment's bound stops it
            assertOutOfBounds(() -> Direct.put(seg, wide, address, eight.duplicate()));
            assertOutOfBounds(() -> Direct.get(seg, wide, address, ByteBuffer.allocateDirect(8)));
            if ((past & 7) == 0) {
                assertOutOfBounds(() -> Direct.atomicPost(seg, wide, address, AtomicOp.ADD, 8, 1));
                assertOutOfBounds(() -> Direct.fetch(seg, wide, address, AtomicOp.ADD, 8, 1, 0));
                assertOutOfBounds(() -> Direct.fetch(seg, wide, address, null, 8, 1, 0));
                assertOutOfBounds(() -> Direct.apply(TransportOp.atomic(TransportOp.Kind.ATOMIC_POST, 1, address,
                        wide, AtomicOp.ADD, 8, 1, 0), seg));
            }
            assertOutOfBounds(() -> Direct.apply(TransportOp.rma(TransportOp.Kind.PUT, 1, address, wide,
                    eight.duplicate()), seg));
        }
        for (int width : new int[] {0, 2, 16, -8}) {
            RemoteAccessException e = assertThrows(RemoteAccessException.class,
                    () -> Direct.fetch(seg, wide, BASE, AtomicOp.ADD, width, 1, 0));
            assertEquals(Reason.INVALID_OPERATION, e.reason(), e.getMessage());
        }
        // The last word inside is reachable, and the one access there is the only write.
        Direct.put(seg, wide, BASE + LENGTH - 8, eight.duplicate());
        assertEquals(-1L, owner.buffer().getLong(LENGTH - 8));
        for (int i = 0; i < LENGTH - 8; i++) {
            assertEquals(0, owner.buffer().get(i), "data byte " + i);
        }
        assertEquals(headerBefore.flip(), whole.duplicate().limit(DataSegment.HEADER), "the owner's header");
    }

    private static void assertOutOfBounds(Executable access) {
        assertEquals(Reason.OUT_OF_BOUNDS, assertThrows(RemoteAccessException.class, access).reason());
    }
}
