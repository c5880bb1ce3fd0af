package dev.fenceline.transport.shm;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;
import org.agrona.concurrent.MessageHandler;
import org.agrona.concurrent.UnsafeBuffer;
import org.agrona.concurrent.ringbuffer.ManyToOneRingBuffer;
import org.agrona.concurrent.ringbuffer.RecordDescriptor;
import org.agrona.concurrent.ringbuffer.RingBufferDescriptor;
import org.junit.jupiter.api.Test;

/**
 * A record length a peer process wrote outside the ring's framing (the ring is mapped writable by
 * every peer): the records before it are read, and the reader stops at it every time, where the
 * ring's own reader hands the handler bytes past the ring and then fails at the same record for ever.
 * A head a peer moved neither makes the reader skip records or stall, nor leaves writers a full ring.
 * What is read is zeroed, as the ring's own reader zeroes it (any word may hold a later record's
 * header), and nothing past it.
 */
class InboxFramingTest {
    private static final int CAPACITY = 4096;
    private static final byte FILL = 0x5A;

    private static ManyToOneRingBuffer ring() {
        return new ManyToOneRingBuffer(new UnsafeBuffer(ByteBuffer.allocateDirect(CAPACITY
                + RingBufferDescriptor.TRAILER_LENGTH)));
    }

    private static void write(ManyToOneRingBuffer r, int type, int bytes) {
        int at = r.tryClaim(type, bytes);
        assertTrue(at > 0, "claimed");
        r.buffer().putInt(at, type * 1000);
        r.commit(at);
    }

    /** Claims a record and writes {@code length} into its header instead of committing it. */
    private static void forge(ManyToOneRingBuffer r, int claim, int length) {
        int at = r.tryClaim(9, claim);
        r.buffer().putIntOrdered(RecordDescriptor.lengthOffset(at - RecordDescriptor.HEADER_LENGTH), length);
    }

    @Test
    void goodRecordsAreReadAsTheRingsOwnReaderReadsThem() {
        ManyToOneRingBuffer r = ring();
        InboxFraming f = new InboxFraming(r, 0);
        List<Integer> seen = new ArrayList<>();
        MessageHandler h = (type, buffer, at, length) -> seen.add(buffer.getInt(at));
        for (int round = 0; round < 50; round++) { // wraps the ring, padding records included
            write(r, 1, 8);
            write(r, 2, 100);
            assertEquals(2, f.read(h, 256));
        }
        assertEquals(100, seen.size());
        assertEquals(List.of(1000, 2000), seen.subList(98, 100));
        assertEquals(r.producerPosition(), r.consumerPosition(), "everything consumed");
    }

    @Test
    void whatIsReadIsZeroedAndNothingElse() {
        ManyToOneRingBuffer r = ring();
        InboxFraming f = new InboxFraming(r, 0);
        MessageHandler h = (type, buffer, at, length) -> { };
        // Records of a few words and of hundreds of bytes, every payload byte set, over laps of the
        // ring with padding records at its end.
        int[] sizes = {8, 100, 232, 400};
        for (int round = 0; round < 40; round++) {
            filled(r, 1, sizes[round % sizes.length]);
            filled(r, 2, 8);
            int unread = filled(r, 3, 16); // stays unread until the two before it are read
            long from = f.position();
            assertEquals(2, readAll(f, h, 2), "round " + round);
            assertZeroed(r, from, f.position(), round);
            for (int k = 0; k < 16; k++) {
                assertEquals(FILL, r.buffer().getByte(unread + k), "the unread record's byte " + k + ", round " + round);
            }
            from = f.position();
            assertEquals(1, readAll(f, h, 1), "the third record is still there to read");
            assertZeroed(r, from, f.position(), round);
        }
    }

    /** @return the index of a committed record whose payload bytes are all {@link #FILL} */
    private static int filled(ManyToOneRingBuffer r, int type, int bytes) {
        int at = r.tryClaim(type, bytes);
        assertTrue(at > 0, "claimed");
        r.buffer().setMemory(at, bytes, FILL);
        r.commit(at);
        return at;
    }

    private static void assertZeroed(ManyToOneRingBuffer r, long from, long to, int round) {
        assertTrue(to > from, "something was read in round " + round);
        for (long p = from; p < to; p++) {
            int i = (int) p & (CAPACITY - 1);
            assertEquals(0, r.buffer().getByte(i), "byte " + i + " read in round " + round + " is not zeroed");
        }
    }

    /** Reads {@code n} records: a read stops at the ring's end, where a padding record may stand. */
    private static int readAll(InboxFraming f, MessageHandler h, int n) {
        int got = 0;
        for (int tries = 0; tries < 3 && got < n; tries++) {
            got += f.read(h, n - got);
        }
        return got;
    }

    @Test
    void aLengthPastTheRingStopsTheReaderWithoutReadingPastIt() {
        for (int bogus : new int[] {0x10000000, CAPACITY, 4, CAPACITY / 2}) {
            ManyToOneRingBuffer r = ring();
            InboxFraming f = new InboxFraming(r, 0);
            List<Integer> seen = new ArrayList<>();
            MessageHandler h = (type, buffer, at, length) -> {
                seen.add(type);
                assertTrue(at + length <= CAPACITY, "handed bytes past the ring: " + at + " + " + length);
            };
            write(r, 1, 8);
            forge(r, 16, bogus);
            write(r, 2, 8);
            assertEquals(1, f.read(h, 256), "the record before it, length " + bogus);
            long head = r.consumerPosition();
            for (int i = 0; i < 3; i++) {
                assertEquals(InboxFraming.BROKEN, f.read(h, 256), "length " + bogus);
                assertEquals(head, r.consumerPosition(), "not advanced past it");
            }
            assertEquals(List.of(1), seen);
        }
    }

    @Test
    void theRingsOwnReaderFailsAtSuchARecordForEver() {
        ManyToOneRingBuffer r = ring();
        forge(r, 16, 0x10000000);
        MessageHandler h = (type, buffer, at, length) -> { };
        for (int i = 0; i < 2; i++) {
            assertThrows(IndexOutOfBoundsException.class, () -> r.read(h, 256), "why the inbox has its own reader");
        }
    }

    /** The shared words of the ring's head and its writers' cache of it, as a peer that maps the ring may write them. */
    private static void moveHead(ManyToOneRingBuffer r, long to) {
        r.buffer().putLongOrdered(CAPACITY + RingBufferDescriptor.HEAD_CACHE_POSITION_OFFSET, to);
        r.buffer().putLongOrdered(CAPACITY + RingBufferDescriptor.HEAD_POSITION_OFFSET, to);
    }

    @Test
    void aHeadMovedForwardSkipsNothingAndStallsNothing() {
        ManyToOneRingBuffer r = ring();
        InboxFraming f = new InboxFraming(r, 0);
        List<Integer> seen = new ArrayList<>();
        MessageHandler h = (type, buffer, at, length) -> seen.add(type);
        write(r, 1, 8);
        write(r, 2, 8);
        moveHead(r, r.consumerPosition() + 64); // past both, onto a word never written
        assertEquals(2, f.read(h, 256), "both records read from the reader's own head");
        write(r, 3, 8);
        assertEquals(1, f.read(h, 256));
        assertEquals(List.of(1, 2, 3), seen);
        assertEquals(r.producerPosition(), r.consumerPosition(), "the shared head is the reader's again");
    }

    @Test
    void aHeadMovedBackLeavesWritersAFullRingOnlyUntilTheNextRead() {
        ManyToOneRingBuffer r = ring();
        InboxFraming f = new InboxFraming(r, 0);
        MessageHandler h = (type, buffer, at, length) -> { };
        write(r, 1, 8);
        assertEquals(1, f.read(h, 256));
        long head = r.consumerPosition();
        moveHead(r, head - CAPACITY); // to writers, the ring now looks full
        assertTrue(r.tryClaim(1, 8) < 0, "writers find no room");
        assertEquals(0, f.read(h, 256), "nothing to read");
        assertEquals(head, r.consumerPosition(), "the reader put its head back");
        write(r, 2, 8);
        assertEquals(1, f.read(h, 256));
    }

    /** A reader of a ring just made starts where the ring does, whatever its shared head says by then. */
    @Test
    void aNewReaderTakesNoHeadFromTheSharedWord() {
        ManyToOneRingBuffer r = ring();
        write(r, 1, 8);
        moveHead(r, 64);
        InboxFraming f = new InboxFraming(r, 0);
        assertEquals(1, f.read((type, buffer, at, length) -> { }, 256));
        assertEquals(r.producerPosition(), r.consumerPosition());
    }
}
