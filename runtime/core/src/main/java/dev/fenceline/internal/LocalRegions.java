package dev.fenceline.internal;

import dev.fenceline.spi.RegionHandle;
import java.nio.ByteBuffer;

/** Finds the registration of an operation's local buffer, for zero-copy from registered memory. */
@FunctionalInterface
public interface LocalRegions {
    /** None: no buffer is registered. */
    LocalRegions NONE = (local, transport) -> null;

    /**
     * @param local an operation's local buffer, position to limit
     * @param transport a transport's name
     * @return that transport's handle of the open registered region that holds the whole buffer, or null
     */
    RegionHandle handle(ByteBuffer local, String transport);
}
