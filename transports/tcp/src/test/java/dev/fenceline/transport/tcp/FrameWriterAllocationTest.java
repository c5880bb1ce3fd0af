package dev.fenceline.transport.tcp;

import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.channel.embedded.EmbeddedChannel;
import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Test;

/**
 * What the frame queue allocates per frame in its steady state: nothing, its arrays of slots being
 * reused (a linked queue's node was 24 bytes a frame, an allocation per operation on the data path).
 * Driven through the path that drops what a failed connection queued, on the test's thread, so that
 * the thread's allocation counter sees the queue alone; the socket and event-loop paths take and
 * give back frames through the same queue (FrameWriterTest).
 */
class FrameWriterAllocationTest {
    private static final int FRAMES = 1 << 20;

    @AfterAll
    static void noLeaks() throws InterruptedException {
        LeakGuard.assertNoLeaks();
    }

    @Test
    void queueingAFrameAllocatesNothingInTheQueuesSteadyState() {
        ThreadMXBean mx = ManagementFactory.getThreadMXBean();
        assumeTrue(mx instanceof com.sun.management.ThreadMXBean t && t.isThreadAllocatedMemorySupported()
                && t.isThreadAllocatedMemoryEnabled(), "this JVM counts no allocation per thread");
        com.sun.management.ThreadMXBean threads = (com.sun.management.ThreadMXBean) mx;
        EmbeddedChannel channel = new EmbeddedChannel();
        ByteBuf inner = Unpooled.directBuffer(16);
        try {
            FrameWriter w = new FrameWriter(channel, null, () -> { });
            w.release(); // the connection failed: send() drops what is queued, on this thread
            ByteBuf frame = Unpooled.unreleasableBuffer(inner);
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
            inner.release();
            channel.close();
        }
    }
}
