package dev.fenceline.transport.shm;

import dev.fenceline.ConfigurationException;
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
        try {
            new org.agrona.concurrent.UnsafeBuffer(new byte[8]).putLong(0, 1);
        } catch (IllegalAccessError | ExceptionInInitializerError | NoClassDefFoundError e) {
            throw new ConfigurationException("the shm transport needs the JVM flag --add-exports"
                    + " java.base/jdk.internal.misc=ALL-UNNAMED (Agrona's ring buffers use jdk.internal.misc.Unsafe;"
                    + " see docs/decisions/0003): " + e);
        }
    }
}
