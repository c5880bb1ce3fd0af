package dev.fenceline.transport.tcp;

import dev.fenceline.spi.Transport;
import dev.fenceline.spi.TransportContext;
import dev.fenceline.spi.TransportProvider;

/** The {@code tcp} transport: Netty, native epoll where available. */
public final class TcpTransportProvider implements TransportProvider {
    /** The transport's name in {@code fenceline.transports}. */
    public static final String NAME = "tcp";

    /** For {@link java.util.ServiceLoader}. */
    public TcpTransportProvider() {
    }

    @Override
    public String name() {
        return NAME;
    }

    @Override
    public Transport create(TransportContext context) {
        return new TcpTransport(context, TcpSettings.fromSection(context.config()));
    }
}
