package dev.fenceline.transport.shm;

import dev.fenceline.EndpointFailedException;
import dev.fenceline.FencelineException;
import dev.fenceline.LaneType;
import dev.fenceline.RemoteAccessException;
import dev.fenceline.RemoteAccessException.Reason;
import dev.fenceline.RemoteKey;
import dev.fenceline.spi.LaneListener;
import dev.fenceline.spi.PostStatus;
import dev.fenceline.spi.TransportOp;
import dev.fenceline.spi.support.AbstractLane;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.EnumSet;
import java.util.Set;

/**
 * The bulk lane to a peer process on the same host: puts and gets by cross-memory attach, one copy
 * by the kernel straight between this process's buffer and the peer's registered memory, done when
 * {@link #post} returns. Before each access the lane checks the peer's key table (in the peer's
 * control segment, mapped here) so a forged, stale or closed key is refused and nothing is written.
 * Regions in shared segments are reached by a plain copy into this process's mapping.
 */
final class CmaLane extends AbstractLane {
    private static final Set<LaneType> TYPES = EnumSet.of(LaneType.RMA_BW);
    static final byte KEY_MAGIC = 0x52;

    /**
     * Live lanes by connection id, so a test can replace one as a transport rebuild would. Guarded by
     * itself; long keys unboxed (a concurrent map's node and key were 56 bytes a lane).
     */
    private static final org.agrona.collections.Long2ObjectHashMap<CmaLane> LIVE =
            new org.agrona.collections.Long2ObjectHashMap<>();

    private final ShmTransport transport;
    final Inbox peer;
    private final int maxFragment;
    /**
     * Made at the first transfer to another process (posts come from the endpoint actor only): its
     * staging buffer and iovecs are of no use between workers of one process, nor to an idle lane.
     */
    private Cma cma;

    CmaLane(ShmTransport transport, Inbox peer, int maxFragment) {
        super(ShmTransportProvider.NAME);
        this.transport = transport;
        this.peer = peer;
        this.maxFragment = maxFragment;
        synchronized (LIVE) {
            LIVE.put(id(), this);
        }
    }

    /** @return the live lane with this connection id, or null */
    static CmaLane byId(long connectionId) {
        synchronized (LIVE) {
            return LIVE.get(connectionId);
        }
    }

    ShmTransport owner() {
        return transport;
    }

    /** The key transport data of a registered region: magic, version, slot, control segment name. */
    static byte[] keyData(int slot, String controlSegment) {
        byte[] name = controlSegment.getBytes(StandardCharsets.UTF_8);
        return ByteBuffer.allocate(2 + 4 + 2 + name.length).put(KEY_MAGIC).put((byte) 1).putInt(slot)
                .putShort((short) name.length).put(name).array();
    }

    @Override
    public Set<LaneType> types() {
        return TYPES;
    }

    @Override
    public int maxFragment() {
        return maxFragment;
    }


    @Override
    public boolean deduplicates() {
        return true; // puts and gets are idempotent, and done before post returns
    }

    /**
     * Every access is done before post returns; one taken while the lane was already dead (its
     * failure report on the way) was never done.
     */
    @Override
    public dev.fenceline.spi.Revocation revoke() {
        return dev.fenceline.spi.Revocation.REVOKED;
    }

    /** One copy, straight from the caller's buffer into the peer process (or back): zero-copy, no registration. */
    @Override
    public dev.fenceline.spi.LaneCapabilities capabilities() {
        return new dev.fenceline.spi.LaneCapabilities(0, 0, maxFragment(), false, java.util.Set.of(),
                java.util.Set.of(), false, true, deduplicates());
    }

    /** A failure found before the endpoint bound the lane is reported at bind (AbstractLane). */
    @Override
    public void bind(LaneListener l) {
        listen(l);
    }

    /** @return the endpoint's listener (the transport hands it a replacement) */
    LaneListener boundListener() {
        return listener();
    }

    @Override
    public PostStatus post(TransportOp op) {
        if (!live()) {
            return PostStatus.IN_PROGRESS; // the replacement or failure report is on its way
        }
        if (op.kind() != TransportOp.Kind.PUT && op.kind() != TransportOp.Kind.GET) {
            throw new FencelineException("shm: the cma lane carries puts and gets only, not " + op.kind());
        }
        checkedPayload(op); // a fragment over the limit is the endpoint's error, whatever region it names
        RemoteKey key = op.key();
        DataSegment.Peer seg = transport.peerSegment(key);
        if (seg != null) {
            op.result(Direct.apply(op, seg));
            return PostStatus.COMPLETED;
        }
        int n = op.local().remaining();
        key.checkBounds(op.remoteAddress(), n);
        check(key, op.remoteAddress(), n, op.kind() == TransportOp.Kind.PUT ? dev.fenceline.Access.WRITE
                : dev.fenceline.Access.READ);
        if (!peer.serving()) {
            // Its pid and start time first, every time: once the peer is gone its pid may be another
            // process's, and process_vm_writev would write into that one; nor is a closed worker's
            // memory written, though its process runs on.
            peerGone();
            return PostStatus.IN_PROGRESS;
        }
        if (cma == null) {
            cma = new Cma(maxFragment);
        }
        Integer errno = op.kind() == TransportOp.Kind.PUT ? cma.write(peer.pid, op.remoteAddress(), op.local())
                : cma.read(peer.pid, op.remoteAddress(), op.local());
        if (errno != null) {
            if (!peer.alive() || errno == 1 || errno == 3) { // gone, or EPERM / ESRCH: this lane cannot work
                peerGone();
                return PostStatus.IN_PROGRESS;
            }
            throw new RemoteAccessException(Reason.OUT_OF_BOUNDS, "cma: " + op.kind() + " of " + n
                    + " bytes at 0x" + Long.toHexString(op.remoteAddress()) + " in process " + peer.pid
                    + " failed with errno " + errno);
        }
        return PostStatus.COMPLETED;
    }

    /** The key must name an open slot of this lane's peer. */
    private void check(RemoteKey key, long address, int n, dev.fenceline.Access needed) {
        byte[] d = key.part(ShmTransportProvider.NAME);
        ByteBuffer b = ByteBuffer.wrap(d);
        if (d.length < 8 || b.get() != KEY_MAGIC || b.get() != 1) {
            throw new RemoteAccessException(Reason.MALFORMED_KEY, "cma: key " + key.shortKey()
                    + " carries no registration data");
        }
        int slot = b.getInt();
        int len = Short.toUnsignedInt(b.getShort());
        String name = len == b.remaining() ? new String(d, 8, len, StandardCharsets.UTF_8) : "";
        if (!name.equals(peer.name)) {
            throw new RemoteAccessException(Reason.WRONG_PEER, "cma: key " + key.shortKey()
                    + " belongs to another worker than this endpoint's peer");
        }
        int state = peer.state(slot, key.keyId());
        if (state == Inbox.CLOSED) {
            throw new RemoteAccessException(Reason.REGION_CLOSED, "cma: the region of key " + key.shortKey()
                    + " was closed by its owner");
        }
        if (state != Inbox.OPEN) {
            throw new RemoteAccessException(Reason.UNKNOWN_KEY, "cma: key " + key.shortKey()
                    + " is not registered at the peer (forged or stale)");
        }
        if (!peer.permits(slot, needed)) { // what the owner registered, not what the key claims
            throw new RemoteAccessException(Reason.ACCESS_DENIED, "cma: the region of key " + key.shortKey()
                    + " was registered without " + needed);
        }
        // The range must lie in what the owner registered, not merely in what the key claims.
        if (!peer.covers(slot, address, n)) {
            throw new RemoteAccessException(Reason.OUT_OF_BOUNDS, "cma: 0x" + Long.toHexString(address) + " + " + n
                    + " is outside the region the owner registered under key " + key.shortKey());
        }
    }

    @Override
    public PostStatus flush(long token) {
        return PostStatus.COMPLETED; // nothing is ever outstanding
    }

    /**
     * A liveness probe must reach the peer: its process must exist. The transport's watcher of the
     * peer worker fails this lane within a liveness interval of its close or its process's death
     * ({@link #peerGone}), so a live lane's peer ran a moment ago; the probe reads no /proc file of its own (with ten thousand
     * endpoints, ten thousand reads a second were the largest part of an idle worker's CPU).
     */
    @Override
    public PostStatus keepalive(long token) {
        return live() ? PostStatus.COMPLETED : PostStatus.IN_PROGRESS; // unanswered: keepalive times the lane out
    }

    /** The transport's watcher of the peer worker fails this lane when it closes or dies: no probe per lane. */
    @Override
    public boolean watchesLiveness() {
        return true;
    }

    @Override
    public void fence() {
    }

    @Override
    public void close() {
        end(Phase.CLOSED);
        forgetLive();
        transport.closed(this);
    }

    /** The peer worker closed or its process is gone: the lane fails (its endpoint fails over or fails). */
    void peerGone() {
        if (markFailed()) {
            forgetLive();
            reportFailed(new EndpointFailedException("shm: " + peer.goneReason()));
        }
    }

    private void forgetLive() {
        synchronized (LIVE) {
            LIVE.remove(id());
        }
    }

    void replacedBy() {
        end(Phase.CLOSED);
        forgetLive();
    }

    @Override
    public String toString() {
        return "CmaLane[" + id() + " to process " + peer.pid + "]";
    }
}
