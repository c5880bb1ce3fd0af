package dev.fenceline.spi;

import dev.fenceline.AtomicOp;
import dev.fenceline.RemoteKey;
import java.nio.ByteBuffer;

/**
 * A lane that can perform some operations itself, on the calling thread, complete and remotely
 * visible on return (a store into a shared mapping, a VarHandle atomic on it): the endpoint's fast
 * path by grant (DESIGN §2). Called from any thread while the endpoint's grant is valid, that is
 * while nothing else of the endpoint is outstanding; thread-safe.
 */
public interface DirectAccess {
    /**
     * @param key the region's key
     * @param address the first remote byte
     * @param src the bytes (position to limit; not moved)
     * @return true if done; false if this lane cannot do it directly now (take the normal path)
     * @throws dev.fenceline.RemoteAccessException if the key, range or region is bad (nothing written)
     */
    boolean putNow(RemoteKey key, long address, ByteBuffer src);

    /**
     * @param key the region's key
     * @param address an aligned remote address
     * @param op a postable operation
     * @param width 4 or 8
     * @param operand the operand
     * @return true if done; false if this lane cannot do it directly now
     * @throws dev.fenceline.RemoteAccessException if the key, range, alignment or region is bad
     */
    boolean atomicPostNow(RemoteKey key, long address, AtomicOp op, int width, long operand);
}
