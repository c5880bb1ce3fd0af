package dev.fenceline;

import java.nio.ByteBuffer;

/**
 * Handles active messages of one id at the target worker. It runs on the delivering transport's
 * progress thread, so it must be quick and must not block; the buffers are valid only during the
 * call (copy what you keep). Throwing makes the sender's operation fail with
 * {@link ActiveMessageException}.
 */
@FunctionalInterface
public interface ActiveMessageHandler {
    /**
     * @param header the message header, read-only
     * @param payload the message payload, read-only
     */
    void onMessage(ByteBuffer header, ByteBuffer payload);
}
