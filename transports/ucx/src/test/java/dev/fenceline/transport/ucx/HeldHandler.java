package dev.fenceline.transport.ucx;

import dev.fenceline.ActiveMessageHandler;
import java.nio.ByteBuffer;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

/**
 * An active-message handler that holds the target's progress thread: each message waits inside it
 * until the test lets go (at most 20 s), then is counted.
 */
final class HeldHandler implements ActiveMessageHandler {
    /** Counted down when the first message is inside the handler. */
    final CountDownLatch entered = new CountDownLatch(1);
    /** Messages that left the handler. */
    final AtomicLong handled = new AtomicLong();
    private final CountDownLatch release = new CountDownLatch(1);

    @Override
    public void onMessage(ByteBuffer header, ByteBuffer payload) {
        entered.countDown();
        try {
            release.await(20, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        handled.incrementAndGet();
    }

    /** Lets every message, now and later, through. */
    void release() {
        release.countDown();
    }
}
