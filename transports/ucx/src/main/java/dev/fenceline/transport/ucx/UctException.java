package dev.fenceline.transport.ucx;

import dev.fenceline.FencelineException;

/** A UCT call failed: which call, its UCS status, and UCT's words for it. */
public final class UctException extends FencelineException {
    private static final long serialVersionUID = 1L;

    /** The UCS status code. */
    private final int status;

    /**
     * @param what the call and its subject, as a reader needs them
     * @param status the UCS status code
     * @param detail what UCT or the native library said
     */
    public UctException(String what, int status, String detail) {
        super(what + ": " + detail + " (UCS status " + status + ")");
        this.status = status;
    }

    /** @return the UCS status code */
    public int status() {
        return status;
    }
}
