package dev.fenceline;

/**
 * Root of every error Fenceline reports. Unchecked, because operations report errors through
 * their {@link java.util.concurrent.CompletionStage}; a subclass says what kind of failure it was
 * and its message names the culprit (address, key, bound, lane or configuration key).
 */
public class FencelineException extends RuntimeException {
    private static final long serialVersionUID = 1L;

    /** @param message what went wrong and where */
    public FencelineException(String message) {
        super(message);
    }

    /**
     * @param message what went wrong and where
     * @param cause the underlying failure
     */
    public FencelineException(String message, Throwable cause) {
        super(message, cause);
    }
}
