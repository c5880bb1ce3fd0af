package dev.fenceline.actor;

import dev.fenceline.Access;
import dev.fenceline.AtomicOp;
import dev.fenceline.EndpointClosedException;
import dev.fenceline.FencelineException;
import dev.fenceline.RemoteAccessException;
import dev.fenceline.RemoteAccessException.Reason;
import dev.fenceline.RemoteKey;
import dev.fenceline.internal.RegistrationTable;
import java.nio.ByteBuffer;

/**
 * Everything the origin can refuse before anything is issued, each check written once: the
 * endpoint still takes work, the key belongs to the peer, the range lies in the key's region, an
 * atomic is aligned and postable, a get's buffer is writable. Each returns the typed error, or null.
 */
final class OriginChecks {
    private OriginChecks() {
    }

    /**
     * @param c the endpoint's channel
     * @return why the endpoint takes no more work (failed, closed since or not, which says why; or
     *     closed), or null
     */
    static FencelineException open(EndpointChannel c) {
        FencelineException failed = c.failure();
        if (failed != null) {
            return failed; // as the failed endpoint's actor answers, closed or not
        }
        if (c.isClosing()) {
            return new EndpointClosedException("endpoint " + c.name() + " is closed");
        }
        return null;
    }

    /**
     * @param c the endpoint's channel
     * @param remoteAddress the first remote byte
     * @param key the region's key
     * @param bytes how many bytes the operation touches
     * @param align the alignment it needs (1: none)
     * @param needed the access it needs
     * @return why the operation cannot go, or null
     */
    static FencelineException access(EndpointChannel c, long remoteAddress, RemoteKey key, long bytes, int align,
            Access needed) {
        FencelineException closed = open(c);
        if (closed != null) {
            return closed;
        }
        if (key == null) {
            return new RemoteAccessException(Reason.UNKNOWN_KEY, "remote key is null");
        }
        if (!key.ownerId().equals(c.peer().workerId())) {
            return new RemoteAccessException(Reason.WRONG_PEER, "key " + key.shortKey() + " belongs to worker "
                    + key.ownerId() + ", but endpoint " + c.name() + " leads to " + c.peer());
        }
        if (!key.permits(needed)) {
            return RegistrationTable.denied(key, needed, c.peer().name());
        }
        try {
            key.checkBounds(remoteAddress, bytes);
        } catch (RemoteAccessException e) {
            return e;
        }
        if (align > 1 && (remoteAddress & (align - 1)) != 0) {
            return RegistrationTable.misaligned(remoteAddress, align);
        }
        return null;
    }

    /**
     * @param op an atomic operation
     * @param width 4 or 8
     * @return why it cannot be posted (its old value would be lost), or null
     */
    static FencelineException postable(AtomicOp op, int width) {
        return op.postable() ? null : new RemoteAccessException(Reason.INVALID_OPERATION,
                op + " cannot be posted (its old value would be lost); use atomicFetch" + width * 8);
    }

    /**
     * @param dst a get's destination
     * @return why the get cannot write into it, or null
     */
    static FencelineException writable(ByteBuffer dst) {
        return dst != null && dst.isReadOnly()
                ? new RemoteAccessException(Reason.INVALID_OPERATION, "get into a read-only buffer") : null;
    }
}
