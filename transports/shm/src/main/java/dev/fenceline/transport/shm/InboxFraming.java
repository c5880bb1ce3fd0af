package dev.fenceline.transport.shm;

import org.agrona.BitUtil;
import org.agrona.concurrent.AtomicBuffer;
import org.agrona.concurrent.MessageHandler;
import org.agrona.concurrent.ringbuffer.ManyToOneRingBuffer;
import org.agrona.concurrent.ringbuffer.RecordDescriptor;
import org.agrona.concurrent.ringbuffer.RingBuffer;
import org.agrona.concurrent.ringbuffer.RingBufferDescriptor;

/**
 * Reads an inbox ring's committed records from its head, as the ring's own {@code read} does, but
 * checks the length each record's writer put in its header before it is used: a peer process maps
 * the ring writable and may write any length there. The ring's own reader takes it as it is, hands
 * a handler bytes past the ring's end, and then cannot advance: every later read fails at the same
 * record. A length that does not fit the ring's framing is reported instead, the records before it
 * are consumed, and nothing is read past it (where the next record starts is not known any more).
 *
 * <p>The head, which the ring keeps in shared memory for its writers to see, is the reader's own:
 * a peer that moved it would otherwise make the reader skip records, or stop at a word that was
 * never written and read nothing more, with no error; and writers that saw it moved back would
 * find the ring full for ever. The reader reads from its own head and puts it back in the shared
 * word whenever the two differ (writers' cache of the head, another shared word, is theirs: a
 * process that moves it forward makes them write over records not yet read, as writing them itself
 * would). One reader per ring, on the polling thread.
 */
final class InboxFraming {
    /** {@link #read}'s answer when the record at the head has a length outside the framing. */
    static final int BROKEN = -1;

    private final AtomicBuffer buffer;
    private final int capacity;
    private final int headAt;
    private final int largest;
    /** The head: where the next record starts. */
    private long head;

    /**
     * @param ring the inbox's ring
     * @param head where its next record starts (0 for a ring just made: its file may already be
     *     seen by other processes, whose word for the head is not taken)
     */
    InboxFraming(ManyToOneRingBuffer ring, long head) {
        this.buffer = ring.buffer();
        this.capacity = ring.capacity();
        this.headAt = capacity + RingBufferDescriptor.HEAD_POSITION_OFFSET;
        this.largest = ring.maxMsgLength() + RecordDescriptor.HEADER_LENGTH;
        this.head = head;
        buffer.putLongOrdered(headAt, head);
    }

    /** @return where the next record starts: the reader's own head (polling thread) */
    long position() {
        return head;
    }

    /**
     * @param handler gets each record, as from the ring's own reader
     * @param limit the most records to read
     * @return the records read (padding not counted), or {@link #BROKEN} if the record at the head
     *     (after those read) has a length outside the framing: it and what follows stay unread
     */
    int read(MessageHandler handler, int limit) {
        int headIndex = (int) head & (capacity - 1);
        int block = capacity - headIndex; // records never wrap: a padding record fills a block's end
        int bytesRead = 0;
        int messages = 0;
        boolean broken = false;
        try {
            while (bytesRead < block && messages < limit) {
                int at = headIndex + bytesRead;
                int length = buffer.getIntVolatile(RecordDescriptor.lengthOffset(at));
                if (length <= 0) {
                    break; // not committed yet
                }
                int type = buffer.getInt(RecordDescriptor.typeOffset(at));
                int left = block - bytesRead;
                if (length < RecordDescriptor.HEADER_LENGTH || length > left
                        || (type != RingBuffer.PADDING_MSG_TYPE_ID && length > largest)) {
                    broken = true;
                    break;
                }
                bytesRead += BitUtil.align(length, RecordDescriptor.ALIGNMENT);
                if (type == RingBuffer.PADDING_MSG_TYPE_ID) {
                    continue;
                }
                messages++;
                handler.onMessage(type, buffer, at + RecordDescriptor.HEADER_LENGTH,
                        length - RecordDescriptor.HEADER_LENGTH);
            }
        } finally {
            if (bytesRead > 0) {
                bytesRead = Math.min(bytesRead, block);
                buffer.setMemory(headIndex, bytesRead, (byte) 0);
                head += bytesRead;
                buffer.putLongOrdered(headAt, head);
            } else if (buffer.getLong(headAt) != head) {
                buffer.putLongOrdered(headAt, head); // moved by someone else: writers see the true one again
            }
        }
        return broken && messages == 0 ? BROKEN : messages;
    }

    /** @return the head's position, and what its record claims (for the log) */
    String describeHead() {
        int at = (int) head & (capacity - 1);
        return "the record at position " + head + " claims " + buffer.getIntVolatile(RecordDescriptor.lengthOffset(at))
                + " bytes of type " + buffer.getInt(RecordDescriptor.typeOffset(at)) + " (ring of " + capacity
                + " bytes, largest record " + largest + ")";
    }
}
