package dev.fenceline.spi;

import java.nio.ByteBuffer;

/**
 * Memory a transport provides for {@link dev.fenceline.Worker#allocate(long)} that peers can reach
 * directly (a shared mapping): the region's remote key carries {@link #transportData()} as this
 * transport's part, from which the same transport in a peer process maps the same memory. The
 * other transports then register the memory too ({@link Transport#registerRegion}), each adding a
 * part of its own; this one is not asked again.
 */
public interface SharedMemory extends RegionHandle {
    /** @return the region's memory: direct, zeroed, at least 64-byte aligned */
    ByteBuffer buffer();
}
