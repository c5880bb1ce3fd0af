package dev.fenceline.internal;

import dev.fenceline.MemoryRegion;
import dev.fenceline.RemoteKey;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;

/** A registered region: its memory, its key, and whether it is still open. */
final class RegisteredRegion implements MemoryRegion {
    private final ByteBuffer memory;
    private final RemoteKey key;
    private final RegistrationTable owner;
    /** Every transport's handle of the region, by transport name, each closed with it. */
    private final java.util.Map<String, dev.fenceline.spi.RegionHandle> handles;
    private volatile boolean closed;
    private static final java.lang.invoke.VarHandle CLOSED;

    static {
        try {
            CLOSED = java.lang.invoke.MethodHandles.lookup().findVarHandle(RegisteredRegion.class, "closed",
                    boolean.class);
        } catch (ReflectiveOperationException e) {
            throw new ExceptionInInitializerError(e);
        }
    }

    RegisteredRegion(ByteBuffer memory, RemoteKey key, RegistrationTable owner,
            java.util.Map<String, dev.fenceline.spi.RegionHandle> handles) {
        this.handles = handles;
        this.memory = memory;
        this.key = key;
        this.owner = owner;
    }

    /**
     * @param transport a transport's name
     * @return its handle of the region, or null
     */
    dev.fenceline.spi.RegionHandle handle(String transport) {
        return handles.get(transport);
    }

    /** @return the region's memory, absolute-indexed from 0; never repositioned */
    ByteBuffer memory() {
        return memory;
    }

    @Override
    public boolean isClosed() {
        return closed;
    }

    @Override
    public long address() {
        return key.baseAddress();
    }

    @Override
    public long length() {
        return key.length();
    }

    @Override
    public ByteBuffer buffer() {
        return memory.duplicate().order(ByteOrder.nativeOrder());
    }

    @Override
    public RemoteKey remoteKey() {
        return key;
    }

    @Override
    public void close() {
        if (!closed && CLOSED.compareAndSet(this, false, true)) { // once, whoever closes it (the user, the worker)
            owner.closed(this);
            for (dev.fenceline.spi.RegionHandle h : handles.values()) {
                h.close(); // peers that reach it directly, through any transport, see it closed too
            }
        }
    }

    @Override
    public String toString() {
        return "MemoryRegion[" + key + "]";
    }
}
