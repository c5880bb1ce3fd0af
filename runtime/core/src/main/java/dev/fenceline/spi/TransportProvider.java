package dev.fenceline.spi;

/** Creates a worker's instance of one transport. Registered in {@code META-INF/services}. */
public interface TransportProvider {
    /** @return the transport's name, as used in {@code fenceline.transports} */
    String name();

    /**
     * @param context the worker's identity, the transport's configuration section and the worker's
     *     memory, for incoming operations
     * @return the worker's transport instance
     */
    Transport create(TransportContext context);
}
