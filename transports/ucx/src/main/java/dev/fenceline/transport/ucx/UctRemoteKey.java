package dev.fenceline.transport.ucx;

/** A peer's remote key, unpacked (for a shared-memory component this maps the peer's segment). */
final class UctRemoteKey implements AutoCloseable {
    private final UctIface iface;
    private final Shim shim;
    private final long handle;
    private final long value;
    private boolean closed;

    UctRemoteKey(UctIface iface, long handle) {
        this.iface = iface;
        this.shim = iface.shim();
        this.handle = handle;
        this.value = shim.flu_rkey_value(handle);
    }

    /** @return what operations carry as their rkey */
    long value() {
        return value;
    }

    /**
     * @param remote an address in the peer's region
     * @return a local address that reaches it directly (a mapped segment), or 0
     */
    long pointer(long remote) {
        return shim.flu_rkey_ptr(handle, remote);
    }

    /**
     * Calling threads may be inside an access through its mapping at any time from now on: it is
     * never released, and the iface's close leaves it mapped (until the process ends).
     */
    void keepForProcess() {
        if (!closed) {
            closed = true;
            iface.forget(this);
        }
    }

    @Override
    public void close() {
        if (!closed) {
            closed = true;
            iface.forget(this);
            shim.flu_rkey_release(handle);
        }
    }
}
