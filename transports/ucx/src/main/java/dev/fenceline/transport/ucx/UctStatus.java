package dev.fenceline.transport.ucx;

/** The UCS status codes the ucx transport acts on (checked against the library at load). */
final class UctStatus {
    /** Done. */
    static final int OK = 0;
    /** Started; a completion event follows. */
    static final int IN_PROGRESS = 1;
    /** No room now: nothing was done; add a pending request to hear when there is. */
    static final int NO_RESOURCE = -2;
    /** A pending request was not added because there is room now: try again. */
    static final int BUSY = -15;
    /** The iface does not do that operation (or it was refuted at open). */
    static final int UNSUPPORTED = -22;
    /** No such device. */
    static final int NO_DEVICE = -14;
    /** A length past the iface's limit for that protocol. */
    static final int EXCEEDS_LIMIT = -21;

    private UctStatus() {
    }

    /** @return whether the code is an error (not OK, not in progress) */
    static boolean isError(int status) {
        return status < 0;
    }

    /** @return UCS's text for the code */
    static String describe(int status) {
        return UcxNative.isAvailable() ? UcxNative.shim().flu_status_string(status) : "status " + status;
    }
}
