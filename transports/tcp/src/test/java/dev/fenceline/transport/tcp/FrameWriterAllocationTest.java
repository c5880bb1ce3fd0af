package dev.fenceline.transport.tcp;

import static org.junit.jupiter.api.Assertions.assertTrue;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.channel.embedded.EmbeddedChannel;
import java.lang.management.ManagementFactory;
import org.junit.jupiter.api.Test;

/**
 * What queueing a frame allocates: nothing while the writer keeps up (the frame queue's arrays of
 * slots are reused); a linked queue's node was 24 bytes a frame, an allocation per operation on the
 * data path.
 */
class FrameWriterAllocationTest {
    private static final int FRAMES = 1 << 20;

    @Test
    void queueingAFrameAllocatesNothingWhileTheWriterKeepsUp() {
        com.sun.management.ThreadMXBean threads = (com.sun.management.ThreadMXBean) ManagementFactory.getThreadMXBean();
        org.junit.jupiter.api.Assumptions.assumeTrue(threads.isThreadAllocatedMemorySupported()
                && threads.isThreadAllocatedMemoryEnabled(), "this JVM counts no allocation per thread");
        EmbeddedChannel channel = new EmbeddedChannel();
        try {
            FrameWriter w = new FrameWriter(channel, null, () -> { });
            w.release(); // the connection failed: send() drops what is queued, on this thread
            ByteBuf frame = Unpooled.unreleasableBuffer(Unpooled.directBuffer(16));
            for (int i = 0; i < FRAMES; i++) { // compiled before the count
                w.enqueue(frame);
                w.send(false);
            }
            long id = Thread.currentThread().getId();
            long before = threads.getThreadAllocatedBytes(id);
            for (int i = 0; i < FRAMES; i++) {
                w.enqueue(frame);
                w.send(false);
            }
            double perFrame = (threads.getThreadAllocatedBytes(id) - before) / (double) FRAMES;
            assertTrue(perFrame < 1, "queueing and dropping a frame allocated " + perFrame + " bytes");
        } finally {
            channel.close();
        }
    }
}
