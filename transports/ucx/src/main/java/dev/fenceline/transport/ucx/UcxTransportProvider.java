package dev.fenceline.transport.ucx;

import dev.fenceline.spi.Transport;
import dev.fenceline.spi.TransportContext;
import dev.fenceline.spi.TransportProvider;
import dev.fenceline.spi.support.AgronaAccess;

/**
 * The {@code ucx} transport: UCX's transport layer, UCT, through a small native library, on RDMA
 * adapters (rc, dc, ud), shared memory (posix, sysv, cma) and tcp. Where UCX cannot be loaded it is
 * not offered, and {@link #unavailabilityCause()} says why.
 */
public final class UcxTransportProvider implements TransportProvider {
    /** The transport's name in {@code fenceline.transports}. */
    public static final String NAME = "ucx";

    /** For {@link java.util.ServiceLoader}. */
    public UcxTransportProvider() {
    }

    @Override
    public String name() {
        return NAME;
    }

    /** @return why UCX cannot be used in this process, or null if it can */
    @Override
    public String unavailabilityCause() {
        return UcxNative.unavailabilityCause();
    }

    @Override
    public Transport create(TransportContext context) {
        if (!UcxNative.isAvailable()) {
            throw new UcxUnavailableException(UcxNative.unavailabilityCause());
        }
        AgronaAccess.require(NAME);
        return new UcxTransport(context, UcxSettings.fromSection(context.config()));
    }
}
