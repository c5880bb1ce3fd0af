package dev.fenceline.internal;

import dev.fenceline.spi.RegionHandle;
import dev.fenceline.spi.SharedMemory;
import java.nio.ByteBuffer;
import java.util.Map;

/** The worker's transports, as the registration table asks them about memory. */
public interface RegionTransports {
    /**
     * Shared memory from the first transport that offers it.
     *
     * @param transport the transport's name
     * @param memory the memory, and its handle
     */
    record Shared(String transport, SharedMemory memory) {
    }

    /**
     * @param bytes the region's length
     * @return shared memory from the first transport that offers it, or null
     */
    Shared allocateShared(long bytes);

    /**
     * Registers the memory with every transport that keeps a handle for it.
     *
     * @param memory the region's memory
     * @param except the transport whose shared memory it is (it has its handle already), or null
     * @return each handle by its transport's name, in transport order; if one transport throws, the
     *     handles already made are closed and the exception passed on
     */
    Map<String, RegionHandle> register(ByteBuffer memory, String except);
}
