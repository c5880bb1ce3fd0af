package dev.fenceline.transport.ucx;

import java.util.Arrays;

/** Memory registered with (or allocated by) a memory domain. */
final class UctMemory implements AutoCloseable {
    private final UctIface iface;
    private final Shim shim;
    private final long handle;
    private boolean closed;

    UctMemory(UctIface iface, long handle) {
        this.iface = iface;
        this.shim = iface.shim();
        this.handle = handle;
    }

    long address() {
        return shim.flu_mem_address(handle);
    }

    long length() {
        return shim.flu_mem_length(handle);
    }

    /** @return the UCT memory handle a zero-copy operation on this memory carries */
    long memoryHandle() {
        return shim.flu_mem_handle(handle);
    }

    /** @return the packed remote key a peer unpacks to reach this memory */
    byte[] pack() {
        byte[] buf = new byte[4096];
        long n = shim.flu_mem_pack(handle, buf, buf.length);
        if (n < 0) {
            throw new UctException("uct_md_mkey_pack", (int) n, UctStatus.describe((int) n));
        }
        return Arrays.copyOf(buf, (int) n);
    }

    @Override
    public void close() {
        if (!closed) {
            closed = true;
            iface.forget(this);
            shim.flu_mem_free(handle);
        }
    }
}
