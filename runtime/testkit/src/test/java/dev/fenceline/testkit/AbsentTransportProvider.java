package dev.fenceline.testkit;

import dev.fenceline.spi.Transport;
import dev.fenceline.spi.TransportContext;
import dev.fenceline.spi.TransportProvider;

/** A transport whose backend this process lacks, as ucx is where UCX cannot be loaded. */
public final class AbsentTransportProvider implements TransportProvider {
    /** Its name. */
    static final String NAME = "absent";
    /** Why it cannot run. */
    static final String CAUSE = "its native library is not installed (a test's transport)";

    /** For {@link java.util.ServiceLoader}. */
    public AbsentTransportProvider() {
    }

    @Override
    public String name() {
        return NAME;
    }

    @Override
    public String unavailabilityCause() {
        return CAUSE;
    }

    @Override
    public Transport create(TransportContext context) {
        throw new AssertionError("an unavailable transport is never created");
    }
}
