package dev.fenceline.testkit;

import dev.fenceline.Endpoint;
import dev.fenceline.MemoryRegion;
import dev.fenceline.RemoteKey;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.time.Duration;
import java.util.Objects;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * A peer's region seen from the origin, for checks when the target runs in another process: each
 * {@link #buffer()} reads the whole region through the endpoint (a get, ordered after everything
 * the caller issued before it on that endpoint), so a {@link ModelCheckedWorkload} can verify
 * memory it cannot touch directly. Not for data paths: every call copies the region.
 */
public final class RemoteRegion implements MemoryRegion {
    private final Endpoint ep;
    private final RemoteKey key;
    private final Duration timeout;

    /**
     * @param ep an endpoint to the region's owner
     * @param key the region's key, unpacked at the origin
     * @param timeout how long one read may take
     */
    public RemoteRegion(Endpoint ep, RemoteKey key, Duration timeout) {
        this.ep = Objects.requireNonNull(ep, "ep");
        this.key = Objects.requireNonNull(key, "key");
        this.timeout = Objects.requireNonNull(timeout, "timeout");
        if (key.length() > Integer.MAX_VALUE) {
            throw new IllegalArgumentException("a region of " + key.length() + " bytes is too big to copy");
        }
    }

    @Override
    public long address() {
        return key.baseAddress();
    }

    @Override
    public long length() {
        return key.length();
    }

    /**
     * @return a copy of the region's current contents, native byte order
     * @throws IllegalStateException if the read fails or times out
     */
    @Override
    public ByteBuffer buffer() {
        ByteBuffer copy = ByteBuffer.allocateDirect((int) key.length()).order(ByteOrder.nativeOrder());
        try {
            ep.get(copy, key.baseAddress(), key).toCompletableFuture().get(timeout.toMillis(), TimeUnit.MILLISECONDS);
        } catch (ExecutionException | TimeoutException e) {
            throw new IllegalStateException("reading the remote region " + key.shortKey() + " failed: " + e, e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted while reading the remote region " + key.shortKey(), e);
        }
        return copy;
    }

    @Override
    public RemoteKey remoteKey() {
        return key;
    }

    /** Nothing to release: the region belongs to its owner. */
    @Override
    public void close() {
    }

    /** @return false: this view cannot tell; the owner's region answers an access after its close */
    @Override
    public boolean isClosed() {
        return false;
    }
}
