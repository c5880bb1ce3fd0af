package dev.fenceline;

import java.nio.ByteBuffer;
import java.util.concurrent.CompletionStage;

/**
 * A communication context: owns transports, memory registrations, endpoints and the worker fence
 * epoch. Create one with {@link Fenceline#newWorker(String)}.
 */
public interface Worker {
    /** @return the worker's name */
    String name();

    /** @return what peers need to connect to this worker */
    WorkerAddress address();

    /**
     * @param peer the address of the worker to connect to
     * @return the endpoint, once its lanes are connected
     */
    CompletionStage<Endpoint> connect(WorkerAddress peer);

    /** @return the endpoints of this worker that are open now (a closed one leaves the list) */
    java.util.List<Endpoint> endpoints();

    /**
     * Registers existing memory for every remote access ({@link Access#all()}).
     *
     * @param direct a direct buffer; the region covers its position to limit
     * @return the region
     * @throws IllegalArgumentException if the buffer is not direct or is read-only
     * @throws EndpointClosedException if the worker is closed
     */
    MemoryRegion register(ByteBuffer direct);

    /**
     * Registers existing memory for the given access: peers' other operations on it are refused
     * with {@link RemoteAccessException} ({@code ACCESS_DENIED}), at the origin by the key and at
     * this worker by what was registered.
     *
     * @param direct a direct buffer; the region covers its position to limit
     * @param access what peers may do to it, at least one
     * @return the region
     * @throws IllegalArgumentException if the buffer is not direct or is read-only, or access is empty
     * @throws EndpointClosedException if the worker is closed
     */
    MemoryRegion register(ByteBuffer direct, java.util.Set<Access> access);

    /**
     * Allocates zeroed, cache-line aligned memory and registers it for every remote access.
     *
     * @param bytes the length, at least 1 and at most {@link Integer#MAX_VALUE} - 64
     * @return the region
     * @throws IllegalArgumentException if the length is out of those bounds
     * @throws EndpointClosedException if the worker is closed
     */
    MemoryRegion allocate(long bytes);

    /**
     * Allocates zeroed, cache-line aligned memory and registers it for the given access, as
     * {@link #register(ByteBuffer, java.util.Set)}.
     *
     * @param bytes the length, at least 1 and at most {@link Integer#MAX_VALUE} - 64
     * @param access what peers may do to it, at least one
     * @return the region
     * @throws IllegalArgumentException if the length is out of those bounds, or access is empty
     * @throws EndpointClosedException if the worker is closed
     */
    MemoryRegion allocate(long bytes, java.util.Set<Access> access);

    /**
     * @param packed a key from {@link RemoteKey#toBytes()}
     * @return the key
     * @throws RemoteAccessException with reason {@code MALFORMED_KEY} if the bytes are not a key
     * @throws EndpointClosedException if the worker is closed
     */
    RemoteKey unpackRemoteKey(byte[] packed);

    /** Orders every endpoint of this worker, as {@link Endpoint#fence()} does for one. */
    void fence();

    /** @return completes when every endpoint of this worker is flushed */
    CompletionStage<Void> flush();

    /**
     * Registers (or, with {@code null}, removes) the handler for active messages with {@code id}.
     *
     * @param id the message id, in [0, 65535]
     * @param handler the handler
     */
    void setActiveMessageHandler(int id, ActiveMessageHandler handler);

    /**
     * Lends this worker's I/O to the calling thread until it closes the returned handle (see
     * {@link CallerProgress}): the tcp transport's event loops and the transports' progress agents
     * (shm's inbox polling, ucx's UCT progress) then run only in that thread's
     * {@link CallerProgress#progress()} calls. What runs on no thread of its own (sim) is not lent;
     * where nothing is, the handle's {@code progress()} does nothing.
     *
     * @return the handle, for this thread only
     * @throws IllegalStateException if the worker is closed, its I/O is lent to another thread or
     *     wanted by one, or this is one of its transports' own threads
     */
    CallerProgress progressHere();

    /** @return the worker's counters */
    WorkerStatistics statistics();

    /**
     * Refuses a peer worker from now on, as when its cluster member was declared gone: every
     * operation of the peer's endpoints that this worker's targets have not applied before is
     * answered with an {@link EndpointFailedException} (not applied, and never will be), over every
     * transport and lane it comes on; a copy of one applied before still gets its outcome. What the
     * peer reaches without this worker's target is not refused (shared memory it mapped, a region
     * an RDMA adapter serves by its key): close those regions to revoke that. This worker's own
     * endpoints to the peer are not affected ({@link Endpoint#abort}). The latest 65,536 refused
     * peers are remembered.
     *
     * @param peerWorkerId the peer worker's id ({@link WorkerAddress#workerId()})
     * @param reason why, in the refusals the peer's callers see
     */
    void refusePeer(java.util.UUID peerWorkerId, String reason);

    /**
     * Subscribes to what happens to the lanes of this worker's endpoints: failovers, replacements,
     * recoveries, additions, and endpoint failures. The same events are JFR events (see the
     * {@code dev.fenceline.jfr} package), with no listener needed.
     *
     * @param listener called on the actor system's dispatcher, one event at a time, in order
     * @return closing it unsubscribes
     */
    AutoCloseable addLaneEventListener(LaneEventListener listener);

    /**
     * Flushes and closes every endpoint, then the transports.
     *
     * @return completes when the worker is closed
     */
    CompletionStage<Void> close();

    /**
     * @return completes once the worker has closed, however that came about: {@link #close()}, the
     *     runtime's close, or its actor system terminating
     */
    CompletionStage<Void> whenClosed();
}
