package dev.fenceline.transport.tcp;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.PooledByteBufAllocator;
import io.netty.util.ResourceLeakDetector;

/**
 * Fails a test class that leaked a Netty buffer. Leak detection runs at PARANOID (surefire sets
 * it), so every buffer is tracked; a leak is reported when the buffer is collected and the
 * detector next runs, so this collects garbage and allocates a few tracked buffers first.
 */
final class LeakGuard {
    private LeakGuard() {
    }

    static void assertNoLeaks() throws InterruptedException {
        assertEquals(ResourceLeakDetector.Level.PARANOID, ResourceLeakDetector.getLevel(),
                "leak detection must be paranoid in tests (surefire sets io.netty.leakDetection.level)");
        for (int round = 0; round < 5; round++) {
            System.gc();
            Thread.sleep(50);
            for (int i = 0; i < 64; i++) {
                ByteBuf b = PooledByteBufAllocator.DEFAULT.directBuffer(64);
                b.release();
            }
        }
        assertTrue(LeakRecorder.LEAKS.isEmpty(), () -> "Netty buffers leaked:\n" + String.join("\n\n",
                LeakRecorder.LEAKS));
    }
}
