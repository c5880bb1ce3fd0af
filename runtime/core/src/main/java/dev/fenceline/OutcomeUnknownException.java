package dev.fenceline;

/**
 * The operation may or may not have been applied at the target, or may still be (a copy of it was
 * on a lane that died before its completion arrived, and the target could not be made to refuse
 * it). Fenceline never retries such an operation blindly. Compare {@link EndpointFailedException}
 * for an operation that was not and will not be applied.
 */
public class OutcomeUnknownException extends FencelineException {
    private static final long serialVersionUID = 1L;

    /** @param message names the operation, address and lane */
    public OutcomeUnknownException(String message) {
        super(message);
    }

    /**
     * @param message names the operation, address and lane
     * @param cause what ended the lane or the endpoint
     */
    public OutcomeUnknownException(String message, Throwable cause) {
        super(message, cause);
    }
}
