package dev.fenceline.transport.ucx;

import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

/**
 * Where the build compiled the native library (UCX's headers were installed), UCX must load: a
 * test then fails rather than skips. Elsewhere the UCX tests skip and say why.
 */
final class UcxAssumptions {
    private UcxAssumptions() {
    }

    static void ucxAvailable() {
        if (Boolean.getBoolean("fenceline.ucx.required")) {
            assertTrue(UcxNative.isAvailable(), "the native library was built here, so UCX must load: "
                    + UcxNative.unavailabilityCause());
        } else {
            assumeTrue(UcxNative.isAvailable(), "UCX is not available: " + UcxNative.unavailabilityCause());
        }
    }
}
