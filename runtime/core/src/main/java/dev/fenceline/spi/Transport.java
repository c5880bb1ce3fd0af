package dev.fenceline.spi;

import java.util.List;
import java.util.UUID;
import java.util.concurrent.CompletionStage;

/** One worker's instance of a backend. */
public interface Transport extends AutoCloseable {
    /** @return the transport's name */
    String name();

    /** @return what a peer needs to connect to this worker over this transport */
    byte[] localAddress();

    /**
     * The worker actor starts: spawn the transport's control actors (connection lifecycles,
     * reconnection, liveness) here. Called once, on the worker actor's thread, after
     * {@link #localAddress()} and before the first {@link #connect}. A transport without a control
     * plane of its own keeps the default, which spawns nothing.
     *
     * @param actors spawns children of the worker actor; valid during this call only
     */
    default void start(TransportActors actors) {
    }

    /**
     * The polling loops this transport needs run; the runtime asks once, right after
     * {@link #start}, runs them on threads of its own (never actor-system threads) as
     * {@code fenceline.progress} says, and stops them before {@link #close()}. A transport whose
     * threads are its library's (Netty's event loops) keeps the default, none.
     *
     * @return the agents
     */
    default java.util.List<ProgressAgent> progressAgents() {
        return java.util.List.of();
    }

    /**
     * Lends the work of the transport's own I/O threads (other than its {@link #progressAgents},
     * which the runtime lends itself) to the calling thread until the returned handle is closed
     * ({@link dev.fenceline.Worker#progressHere()}, whose contract the handle keeps). A transport
     * with no such threads, or whose threads cannot be lent, keeps the default, null.
     *
     * @return the loan, or null
     * @throws IllegalStateException if the I/O is lent to or wanted by another thread, or the
     *     transport is closing
     */
    default dev.fenceline.CallerProgress progressHere() {
        return null;
    }

    /**
     * Connects to a peer's instance of this transport.
     *
     * @param peerId the peer worker's identity
     * @param peerAddress the peer's {@link #localAddress()}
     * @return the lane connections, in lane-index order; fails with a
     *     {@link dev.fenceline.FencelineException} if the peer cannot be reached
     */
    CompletionStage<List<LaneConnection>> connect(UUID peerId, byte[] peerAddress);

    /**
     * Memory for {@link dev.fenceline.Worker#allocate(long)} that peers of this transport reach
     * directly. The first enabled transport that returns memory provides the region.
     *
     * @param bytes the region's length
     * @return shared memory, or null if this transport has none to offer (the default)
     */
    default SharedMemory allocateShared(long bytes) {
        return null;
    }

    /**
     * A region of memory is being registered ({@link dev.fenceline.Worker#register}, or
     * {@link dev.fenceline.Worker#allocate} with another transport's shared memory): a transport
     * whose peers reach such memory without the owner's help (cross-memory attach, an RDMA memory
     * key) may track it. Every enabled transport is asked, in order; each handle's data becomes that
     * transport's part of the key ({@link dev.fenceline.RemoteKey#part}), and closing the region
     * closes every handle. A transport that throws fails the registration (the handles made so far
     * are closed).
     *
     * @param memory the region's memory (direct)
     * @return a handle, or null (the default)
     */
    default RegionHandle registerRegion(java.nio.ByteBuffer memory) {
        return null;
    }

    /**
     * A peer's remote key was unpacked on this worker: a transport that reaches such memory
     * directly may prepare now (map it), on the caller's thread, rather than on the first operation.
     *
     * @param key the key
     */
    default void keyUnpacked(dev.fenceline.RemoteKey key) {
    }

    /** Closes every connection and releases the backend's resources. */
    @Override
    void close();
}
