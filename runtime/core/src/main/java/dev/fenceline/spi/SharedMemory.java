package dev.fenceline.spi;

import java.nio.ByteBuffer;

/**
 * Memory a transport provides for {@link dev.fenceline.Worker#allocate(long)} that peers can reach
 * directly (a shared mapping): the region's remote key carries {@link #transportData()}, from which
 * the same transport in a peer process maps the same memory.
 */
public interface SharedMemory {
    /** @return the region's memory: direct, zeroed, at least 64-byte aligned */
    ByteBuffer buffer();

    /** @return what a peer's transport needs to reach this memory; goes into the remote key */
    byte[] transportData();

    /**
     * The region was registered under {@code keyId}: make the key checkable by peers, so a forged
     * or stale key is refused.
     *
     * @param keyId the region's key
     */
    void registered(long keyId);

    /** The region was closed: peers must see it closed from now on; release the memory. */
    void close();
}
