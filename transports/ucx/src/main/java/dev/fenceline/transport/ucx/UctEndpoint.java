package dev.fenceline.transport.ucx;

import org.agrona.concurrent.UnsafeBuffer;

/**
 * One UCT endpoint: a connection of an iface to one peer iface. Each call writes the worker's
 * operation block and starts it, returning the UCS status: {@link UctStatus#OK} (done),
 * {@link UctStatus#IN_PROGRESS} (its {@code token} comes back in a completion event),
 * {@link UctStatus#NO_RESOURCE} (nothing done: {@link #pending} asks for a ready event), or an
 * error. Addresses are native: a local buffer must stay put until its operation completes.
 */
final class UctEndpoint implements AutoCloseable {
    static final int ADD = 0;
    static final int AND = 1;
    static final int OR = 2;
    static final int XOR = 3;
    static final int SWAP = 4;

    private final UctIface iface;
    private final Shim shim;
    final long handle;
    private final UnsafeBuffer op;
    private final long opAddress;
    private boolean closed;
    /** UCT flushes and fences asked of it (its agent's thread; tests read them after an answer). */
    int flushes;
    int fences;

    UctEndpoint(UctIface iface, long handle) {
        this.iface = iface;
        this.shim = iface.worker().shim();
        this.handle = handle;
        this.op = iface.worker().op;
        this.opAddress = iface.worker().opAddress;
    }

    UctIface iface() {
        return iface;
    }

    private int post(int kind, long local, long length, long remote, long rkey, long token) {
        UnsafeBuffer o = op;
        o.putInt(Layout.OP_KIND, kind);
        o.putLong(Layout.OP_LOCAL, local);
        o.putLong(Layout.OP_LENGTH, length);
        o.putLong(Layout.OP_REMOTE, remote);
        o.putLong(Layout.OP_RKEY, rkey);
        o.putLong(Layout.OP_TOKEN, token);
        return shim.flu_post(handle, opAddress);
    }

    int putShort(long local, int length, long remote, long rkey) {
        return post(Layout.PUT_SHORT, local, length, remote, rkey, 0);
    }

    int putBcopy(long local, long length, long remote, long rkey) {
        return post(Layout.PUT_BCOPY, local, length, remote, rkey, 0);
    }

    int putZcopy(long local, long length, long memoryHandle, long remote, long rkey, long token) {
        op.putLong(Layout.OP_MEMH, memoryHandle);
        return post(Layout.PUT_ZCOPY, local, length, remote, rkey, token);
    }

    int getShort(long local, int length, long remote, long rkey) {
        return post(Layout.GET_SHORT, local, length, remote, rkey, 0);
    }

    int getBcopy(long local, long length, long remote, long rkey, long token) {
        return post(Layout.GET_BCOPY, local, length, remote, rkey, token);
    }

    int getZcopy(long local, long length, long memoryHandle, long remote, long rkey, long token) {
        op.putLong(Layout.OP_MEMH, memoryHandle);
        return post(Layout.GET_ZCOPY, local, length, remote, rkey, token);
    }

    /** A posted atomic: {@code op} is {@link #ADD} ... {@link #SWAP}, {@code width} 4 or 8. */
    int atomicPost(int atomicOp, int width, long operand, long remote, long rkey) {
        op.putInt(Layout.OP_ATOMIC_OP, atomicOp);
        op.putInt(Layout.OP_WIDTH, width);
        op.putLong(Layout.OP_VALUE, operand);
        return post(Layout.ATOMIC_POST, 0, 0, remote, rkey, 0);
    }

    /** A fetching atomic; on {@link UctStatus#OK} the old value is {@link #result()}. */
    int atomicFetch(int atomicOp, int width, long operand, long remote, long rkey, long token) {
        op.putInt(Layout.OP_ATOMIC_OP, atomicOp);
        op.putInt(Layout.OP_WIDTH, width);
        op.putLong(Layout.OP_VALUE, operand);
        return post(Layout.ATOMIC_FETCH, 0, 0, remote, rkey, token);
    }

    /** Compare-and-swap; on {@link UctStatus#OK} the old value is {@link #result()}. */
    int compareAndSwap(int width, long expected, long desired, long remote, long rkey, long token) {
        op.putInt(Layout.OP_WIDTH, width);
        op.putLong(Layout.OP_COMPARE, expected);
        op.putLong(Layout.OP_VALUE, desired);
        return post(Layout.CSWAP, 0, 0, remote, rkey, token);
    }

    /** @return the value fetched by the last operation that completed at once */
    long result() {
        return op.getLong(Layout.OP_RESULT);
    }

    /** A short active message: the 8-byte header, then {@code length} payload bytes. */
    int activeMessageShort(int id, long header, long payload, int length) {
        op.putInt(Layout.OP_AM_ID, id);
        op.putLong(Layout.OP_VALUE, header);
        return post(Layout.AM_SHORT, payload, length, 0, 0, 0);
    }

    /** A copied active message of {@code length} bytes. */
    int activeMessageCopy(int id, long payload, long length) {
        op.putInt(Layout.OP_AM_ID, id);
        return post(Layout.AM_BCOPY, payload, length, 0, 0, 0);
    }

    /**
     * One message of two pieces, each copied once into UCT's buffer: a request's header, then its
     * payload from where the caller keeps it (native memory, valid during the call).
     */
    int activeMessageCopy(int id, long first, long firstLength, long second, long secondLength) {
        op.putInt(Layout.OP_AM_ID, id);
        op.putLong(Layout.OP_COMPARE, secondLength);
        return post(Layout.AM_BCOPY, first, firstLength, second, 0, 0);
    }

    /**
     * UCT's flush (UCT_FLUSH_FLAG_LOCAL, the only one UCX 1.13 has, and what UCP's flush relies on
     * for remote completion): everything posted before is complete when the token's completion
     * comes (or OK at once).
     */
    int flush(long token) {
        flushes++;
        return post(Layout.FLUSH, 0, 0, 0, 0, token);
    }

    /** Operations posted after it are ordered after those before it. */
    int fence() {
        fences++;
        return post(Layout.FENCE, 0, 0, 0, 0, 0);
    }

    /**
     * After {@link UctStatus#NO_RESOURCE}: asks for a ready event with {@code token} when there is
     * room. {@link UctStatus#BUSY} means there is room already.
     */
    int pending(long token) {
        return post(Layout.PENDING, 0, 0, 0, 0, token);
    }

    /**
     * @return this endpoint's address, for a peer's endpoint to connect to (connect-to-endpoint
     *     transports only)
     */
    byte[] address() {
        byte[] buf = new byte[(int) Math.max(1, iface.attributes().endpointAddressLength())];
        long n = shim.flu_ep_address(handle, buf, buf.length);
        if (n < 0) {
            throw new UctException("uct_ep_get_address of " + iface, (int) n, UctStatus.describe((int) n));
        }
        return n == buf.length ? buf : java.util.Arrays.copyOf(buf, (int) n);
    }

    /**
     * Connects this endpoint (made by {@link UctIface#unconnected()}) to a peer's.
     *
     * @param peerIface the peer iface's address, as its {@link UctIface#address()} gave it
     * @param peerEndpoint the peer endpoint's {@link #address()}
     * @throws UctException if either address is malformed or UCT refuses
     */
    void connectTo(byte[] peerIface, byte[] peerEndpoint) {
        int s = shim.flu_ep_connect(handle, peerIface, peerIface.length, peerEndpoint, peerEndpoint.length);
        if (s != UctStatus.OK) {
            throw iface.worker().lastError("connecting an endpoint of " + iface + " to a peer's endpoint");
        }
    }

    boolean closed() {
        return closed;
    }

    /** Marks the endpoint gone without destroying it (its iface did). */
    void forgotten() {
        closed = true;
    }

    /** Destroys the endpoint; what it had pending is dropped. */
    @Override
    public void close() {
        if (!closed) {
            closed = true;
            iface.forget(this);
            shim.flu_ep_destroy(handle);
        }
    }
}
