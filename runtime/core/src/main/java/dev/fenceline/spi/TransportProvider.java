package dev.fenceline.spi;

/** Creates a worker's instance of one transport. Registered in {@code META-INF/services}. */
public interface TransportProvider {
    /** @return the transport's name, as used in {@code fenceline.transports} */
    String name();

    /**
     * Whether the transport can run in this process at all (its native library loads, the host has
     * what it needs), in the manner of Netty's {@code Epoll.unavailabilityCause()}. A transport that
     * cannot is not offered: {@code fenceline.transports = auto} leaves it out, and a list that names
     * it leaves it out with a warning that gives this cause, as long as another named transport can
     * run.
     *
     * @return why it cannot, or null if it can (the default)
     */
    default String unavailabilityCause() {
        return null;
    }

    /**
     * @param context the worker's identity, the transport's configuration section and the worker's
     *     memory, for incoming operations
     * @return the worker's transport instance
     */
    Transport create(TransportContext context);
}
