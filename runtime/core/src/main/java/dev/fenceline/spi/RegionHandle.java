package dev.fenceline.spi;

/**
 * What a transport keeps about one registered region so that peers can reach it without asking
 * the owner (cross-memory attach, a shared mapping): data for the region's remote key, and a way to
 * tell peers the region's key and when it closes.
 */
public interface RegionHandle {
    /** @return what a peer's transport needs for this region: this transport's part of the remote key */
    byte[] transportData();

    /**
     * The region was registered under {@code keyId}: make the key checkable by peers, so a forged
     * or stale key is refused.
     *
     * @param keyId the region's key
     */
    void registered(long keyId);

    /**
     * The region was registered under {@code keyId} for {@code access}. A transport whose peers
     * reach the memory without the owner (a shared mapping, cross-memory attach, an RDMA key) makes
     * the access checkable there too, since the owner's own check never sees such an operation; the
     * default is {@link #registered(long)}.
     *
     * @param keyId the region's key
     * @param access what peers may do to it
     */
    default void registered(long keyId, java.util.Set<dev.fenceline.Access> access) {
        registered(keyId);
    }

    /** The region was closed: peers must see it closed from now on. */
    void close();
}
