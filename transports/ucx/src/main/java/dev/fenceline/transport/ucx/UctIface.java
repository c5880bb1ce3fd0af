package dev.fenceline.transport.ucx;

import dev.fenceline.Access;
import java.util.Arrays;
import java.util.List;
import java.util.Set;

/** One UCT iface: a transport on a device, with its memory domain. Confined like its worker. */
final class UctIface implements AutoCloseable {
    private final UctWorker worker;
    private final Shim shim;
    final long handle;
    private final UctResource resource;
    private final UctIfaceAttributes attributes;
    // The progress agent makes endpoints and unpacks keys while other threads allocate and register
    // memory (the memory domain's calls, under the regions' lock): the lists are concurrent.
    private final Set<UctEndpoint> endpoints = java.util.concurrent.ConcurrentHashMap.newKeySet();
    /** Memory and keys, freed before the iface. */
    private final Set<AutoCloseable> owned = java.util.concurrent.ConcurrentHashMap.newKeySet();
    private boolean closed;
    /** See {@link #completesInPlace()}; set before the progress agent starts. */
    private boolean inPlace;

    UctIface(UctWorker worker, long handle, UctResource resource, UctIfaceAttributes attributes) {
        this.worker = worker;
        this.shim = worker.shim();
        this.handle = handle;
        this.resource = resource;
        this.attributes = attributes;
        this.inPlace = completesInPlace(resource);
    }

    /**
     * @param r a resource
     * @return whether an operation UCT completed on it is in the target's memory already: on shared
     *     memory and self the calling CPU does the copy (posix, sysv, cma, knem, xpmem); elsewhere
     *     (an adapter, an accelerator) completion may mean only that the device took it
     */
    static boolean completesInPlace(UctResource r) {
        return r.deviceType().equals("shm") || r.deviceType().equals("self");
    }

    /**
     * @return whether an operation UCT completed is applied at the target; if not, a put or atomic
     *     post is answered after a UCT flush, and a weak fence is UCT's ({@code uct-flush})
     */
    boolean completesInPlace() {
        return inPlace;
    }

    /** {@code uct-flush = always}: as if its completions were not in place (before the agent starts). */
    void flushThroughUct() {
        inPlace = false;
    }

    UctResource resource() {
        return resource;
    }

    UctIfaceAttributes attributes() {
        return attributes;
    }

    UctWorker worker() {
        return worker;
    }

    /** @return the address a peer connects to: device and iface address, framed */
    byte[] address() {
        byte[] buf = new byte[(int) (4 + attributes.deviceAddressLength() + attributes.ifaceAddressLength())];
        long n = shim.flu_iface_address(handle, buf, buf.length);
        if (n < 0) {
            throw new UctException("uct_iface_get_address of " + resource, (int) n, UctStatus.describe((int) n));
        }
        return n == buf.length ? buf : Arrays.copyOf(buf, (int) n);
    }

    /**
     * @param address a peer's {@link #address()}, as it sent it
     * @return whether it is well formed and this iface reaches it
     */
    boolean reachable(byte[] address) {
        return shim.flu_iface_reachable(handle, address, address.length) == 1;
    }

    /**
     * @param address a peer's {@link #address()}
     * @return an endpoint to it
     * @throws UctException if the address is malformed or UCT cannot connect
     */
    UctEndpoint connect(byte[] address) {
        long ep = shim.flu_ep_create(handle, address, address.length);
        if (ep == 0) {
            throw worker.lastError("connecting " + resource + " to a peer");
        }
        UctEndpoint e = new UctEndpoint(this, ep);
        endpoints.add(e);
        return e;
    }

    /**
     * An endpoint of a connect-to-endpoint transport, to be connected to a peer's endpoint once its
     * address arrives ({@link UctEndpoint#connectTo}).
     *
     * @return the endpoint, not yet connected
     * @throws UctException if the transport cannot connect to endpoints
     */
    UctEndpoint unconnected() {
        long ep = shim.flu_ep_create_unconnected(handle);
        if (ep == 0) {
            throw worker.lastError("making an endpoint of " + resource);
        }
        UctEndpoint e = new UctEndpoint(this, ep);
        endpoints.add(e);
        return e;
    }

    /**
     * @param length bytes
     * @param access what peers may do to it
     * @return memory allocated and registered by the memory domain (what posix and sysv share)
     */
    UctMemory allocate(long length, Set<Access> access) {
        long m = shim.flu_mem_alloc(handle, length, bits(access));
        if (m == 0) {
            throw worker.lastError("allocating " + length + " bytes on " + resource);
        }
        return own(new UctMemory(this, m));
    }

    /**
     * @param address the memory's address
     * @param length bytes
     * @param access what peers may do to it
     * @return the registration
     */
    UctMemory register(long address, long length, Set<Access> access) {
        long m = shim.flu_mem_reg(handle, address, length, bits(access));
        if (m == 0) {
            throw worker.lastError("registering " + length + " bytes at 0x" + Long.toHexString(address) + " on "
                    + resource);
        }
        return own(new UctMemory(this, m));
    }

    /**
     * @param packed a peer's packed key for this iface's component
     * @return the unpacked key
     * @throws UctException if it has the wrong length or UCT refuses it
     */
    UctRemoteKey unpack(byte[] packed) {
        long r = shim.flu_rkey_unpack(handle, packed, packed.length);
        if (r == 0) {
            throw worker.lastError("unpacking a remote key on " + resource);
        }
        return own(new UctRemoteKey(this, r));
    }

    private <T extends AutoCloseable> T own(T t) {
        owned.add(t);
        return t;
    }

    void forget(UctEndpoint e) {
        endpoints.remove(e);
    }

    void forget(AutoCloseable memoryOrKey) {
        owned.remove(memoryOrKey);
    }

    Shim shim() {
        return shim;
    }

    private static int bits(Set<Access> access) {
        return (access.contains(Access.READ) ? Layout.ACCESS_READ : 0)
                | (access.contains(Access.WRITE) ? Layout.ACCESS_WRITE : 0)
                | (access.contains(Access.ATOMIC) ? Layout.ACCESS_ATOMIC : 0);
    }

    /**
     * Frees its keys and memory, then closes its endpoints and the iface; while the JVM exits, the
     * memory it allocated stays mapped for the process's end ({@link JvmExit}).
     */
    @Override
    public void close() {
        if (!closed) {
            closed = true;
            boolean exiting = JvmExit.underway();
            for (AutoCloseable o : List.copyOf(owned)) {
                if (exiting && o instanceof UctMemory) {
                    continue;
                }
                try {
                    o.close();
                } catch (Exception e) {
                    throw new IllegalStateException("closing " + o + " of " + resource, e);
                }
            }
            for (UctEndpoint e : endpoints) {
                e.forgotten();
            }
            endpoints.clear();
            worker.forget(this);
            shim.flu_iface_close(handle);
        }
    }

    @Override
    public String toString() {
        return resource.toString();
    }
}
