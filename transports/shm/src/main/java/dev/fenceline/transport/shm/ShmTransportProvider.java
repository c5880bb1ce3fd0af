package dev.fenceline.transport.shm;

import dev.fenceline.spi.Transport;
import dev.fenceline.spi.TransportContext;
import dev.fenceline.spi.TransportProvider;

/** The {@code shm} transport: processes on one host, through shared memory. */
public final class ShmTransportProvider implements TransportProvider {
    /** The transport's name in {@code fenceline.transports}. */
    public static final String NAME = "shm";

    /** For {@link java.util.ServiceLoader}. */
    public ShmTransportProvider() {
    }

    @Override
    public String name() {
        return NAME;
    }

    @Override
    public Transport create(TransportContext context) {
        probeAgrona();
        return new ShmTransport(context, ShmSettings.fromSection(context.config()));
    }

    /** Agrona 2's buffers need jdk.internal.misc.Unsafe: say so clearly instead of an IllegalAccessError. */
    static void probeAgrona() {
        dev.fenceline.spi.support.AgronaAccess.require(NAME);
    }
}
