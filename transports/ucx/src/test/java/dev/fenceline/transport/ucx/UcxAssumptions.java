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

    /**
     * @param transport a UCT transport
     * @param device its device
     * @return the host's resource of that transport on that device; the test fails, naming what the
     *     host has, if there is none
     */
    static UctResource resource(String transport, String device) {
        return UcxNative.resources().stream()
                .filter(r -> r.transport().equals(transport) && r.device().equals(device)).findFirst()
                .orElseThrow(() -> new AssertionError("no " + transport + "/" + device + " in " + UcxNative.resources()));
    }
}
