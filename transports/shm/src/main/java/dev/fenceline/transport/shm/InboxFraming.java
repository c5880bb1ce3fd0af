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
 */
final class InboxFraming {
    /** {@link #read}'s answer when the record at the head has a length outside the framing. */
    static final int BROKEN = -1;

    private InboxFraming() {
    }

    /**
     * @param ring the inbox's ring
     * @param handler gets each record, as from the ring's own reader
     * @param limit the most records to read
     * @return the records read (padding not counted), or {@link #BROKEN} if the record at the head
     *     (after those read) has a length outside the framing: it and what follows stay unread
     */
    static int read(ManyToOneRingBuffer ring, MessageHandler handler, int limit) {
        AtomicBuffer buffer = ring.buffer();
        int capacity = ring.capacity();
        int headAt = capacity + RingBufferDescriptor.HEAD_POSITION_OFFSET;
        long head = buffer.getLong(headAt);
        int headIndex = (int) head & (capacity - 1);
        int block = capacity - headIndex; // records never wrap: a padding record fills a block's end
        int largest = ring.maxMsgLength() + RecordDescriptor.HEADER_LENGTH;
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
                buffer.putLongOrdered(headAt, head + bytesRead);
            }
        }
        return broken && messages == 0 ? BROKEN : messages;
    }

    /**
     * @param ring the inbox's ring
     * @return the head's position, and what its record claims (for the log)
     */
    static String describeHead(ManyToOneRingBuffer ring) {
        AtomicBuffer buffer = ring.buffer();
        int capacity = ring.capacity();
        long head = buffer.getLong(capacity + RingBufferDescriptor.HEAD_POSITION_OFFSET);
        int at = (int) head & (capacity - 1);
        return "the record at position " + head + " claims " + buffer.getIntVolatile(RecordDescriptor.lengthOffset(at))
                + " bytes of type " + buffer.getInt(RecordDescriptor.typeOffset(at)) + " (ring of " + capacity
                + " bytes, largest record " + (ring.maxMsgLength() + RecordDescriptor.HEADER_LENGTH) + ")";
    }
}
