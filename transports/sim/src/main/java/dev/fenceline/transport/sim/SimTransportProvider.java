package dev.fenceline.transport.sim;

import dev.fenceline.spi.Transport;
import dev.fenceline.spi.TransportContext;
import dev.fenceline.spi.TransportProvider;

/** Provides the {@code sim} transport; enable it with {@code fenceline.transports = [sim]}. */
public final class SimTransportProvider implements TransportProvider {
    /** The transport's name. */
    public static final String NAME = "sim";

    @Override
    public String name() {
        return NAME;
    }

    @Override
    public Transport create(TransportContext context) {
        return new SimTransport(context, SimSettings.fromSection(context.config()));
    }
}
