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
     * Connects to a peer's instance of this transport.
     *
     * @param peerId the peer worker's identity
     * @param peerAddress the peer's {@link #localAddress()}
     * @return the lane connections, in lane-index order; fails with a
     *     {@link dev.fenceline.FencelineException} if the peer cannot be reached
     */
    CompletionStage<List<LaneConnection>> connect(UUID peerId, byte[] peerAddress);

    /** Closes every connection and releases the backend's resources. */
    @Override
    void close();
}
