package dev.fenceline;

/**
 * A remote memory access was refused: the key is unknown or malformed, the range lies outside the
 * registered region, the region is closed, or an atomic is misaligned. Nothing was written at the
 * target. The endpoint stays usable.
 */
public class RemoteAccessException extends FencelineException {
    private static final long serialVersionUID = 1L;

    /** Why the access was refused. */
    public enum Reason {
        /** The remote key is not registered at the target (wrong or forged key). */
        UNKNOWN_KEY,
        /** The remote key bytes could not be decoded. */
        MALFORMED_KEY,
        /** The key belongs to another worker than the endpoint's peer. */
        WRONG_PEER,
        /** The range is not inside the registered region. */
        OUT_OF_BOUNDS,
        /** The region was closed by its owner. */
        REGION_CLOSED,
        /** An atomic's address is not aligned to its width. */
        MISALIGNED,
        /** The operation is not valid for its arguments (for example a posted SWAP). */
        INVALID_OPERATION,
        /** The region was registered without the access the operation needs ({@link dev.fenceline.Access}). */
        ACCESS_DENIED
    }

    /** What kind of refusal it is. */
    private final Reason reason;

    /**
     * @param reason the kind of refusal
     * @param message names the address, key and bound involved
     */
    public RemoteAccessException(Reason reason, String message) {
        super(message);
        this.reason = reason;
    }

    /** @return why the access was refused */
    public Reason reason() {
        return reason;
    }
}
