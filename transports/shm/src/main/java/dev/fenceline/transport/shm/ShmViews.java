package dev.fenceline.transport.shm;

import java.nio.ByteBuffer;
import org.agrona.concurrent.AtomicBuffer;

/**
 * Read-only views of part of a message in the inbox, for the target to apply it: a put's data, an
 * active message's header and payload. Each is a slice of one read-only view of the inbox's buffer,
 * made again only when that buffer changes: one object per view, which goes to a handler as it is.
 * Valid during the apply only (the target copies out). Polling thread only.
 */
final class ShmViews {
    /** The buffer {@link #readOnlyWhole} is a view of. */
    private ByteBuffer wholeViewed;
    /** A read-only view of it, whose slices are read-only. */
    private ByteBuffer readOnlyWhole;

    /**
     * @param b the buffer the message is in
     * @param at the view's first byte in it
     * @param n its bytes
     * @return a read-only, big-endian view of them
     */
    ByteBuffer of(AtomicBuffer b, int at, int n) {
        ByteBuffer whole = b.byteBuffer();
        if (whole != null) {
            if (whole != wholeViewed) {
                readOnlyWhole = whole.asReadOnlyBuffer();
                wholeViewed = whole;
            }
            return readOnlyWhole.slice(b.wrapAdjustment() + at, n); // big-endian, like any fresh slice
        }
        byte[] copy = new byte[n];
        b.getBytes(at, copy);
        return ByteBuffer.wrap(copy).asReadOnlyBuffer();
    }
}
