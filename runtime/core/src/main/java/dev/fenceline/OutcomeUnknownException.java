package dev.fenceline;

/**
 * The operation may or may not have been applied at the target (a one-sided atomic on a lane that
 * died before its completion arrived). Fenceline never retries such an operation blindly.
 */
public class OutcomeUnknownException extends FencelineException {
    private static final long serialVersionUID = 1L;

    /** @param message names the operation, address and lane */
    public OutcomeUnknownException(String message) {
        super(message);
    }
}
