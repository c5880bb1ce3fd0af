package dev.fenceline.transport.ucx;

import dev.fenceline.FencelineException;

/** UCX cannot be used in this process; the message says why (no library, a version mismatch, ...). */
public final class UcxUnavailableException extends FencelineException {
    private static final long serialVersionUID = 1L;

    /** @param cause why UCX is not available */
    public UcxUnavailableException(String cause) {
        super("UCX is not available: " + cause);
    }
}
