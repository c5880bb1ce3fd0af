package dev.fenceline;

import java.nio.ByteBuffer;

/**
 * Local memory registered with a worker, so that peers holding its {@link #remoteKey()} can read,
 * write and atomically update it. Addresses are the memory's native addresses.
 */
public interface MemoryRegion extends AutoCloseable {
    /** @return the region's first native address */
    long address();

    /** @return the region's length in bytes */
    long length();

    /**
     * @return a view of the region's memory (native byte order, position 0, limit {@link #length()});
     *     each call returns a new view
     */
    ByteBuffer buffer();

    /** @return the capability peers use to access this region */
    RemoteKey remoteKey();

    /**
     * Deregisters the region: later remote accesses fail with a {@link RemoteAccessException} of
     * reason {@code REGION_CLOSED}. Idempotent. An access the target had already begun when this is
     * called (a copy under way on a transport's thread, a peer's store into shared memory) may still
     * complete after it returns: close does not wait for one. Before reusing registered memory for
     * something else, make sure no peer still writes to it or reads it (the application's protocol:
     * a flush by each peer that used the key, say).
     */
    @Override
    void close();

    /** @return whether the region was closed: its key reaches nothing any more */
    boolean isClosed();
}
