package dev.fenceline;

/**
 * The endpoint can no longer reach its peer (every lane failed, or the peer is gone), and the
 * operation was not and will not be applied. An outstanding request of which a copy may have been
 * applied, or may still be, fails with an {@link OutcomeUnknownException} instead (whose cause is
 * this); later requests fail at once.
 */
public class EndpointFailedException extends FencelineException {
    private static final long serialVersionUID = 1L;

    /** @param message names the endpoint and what failed */
    public EndpointFailedException(String message) {
        super(message);
    }

    /**
     * @param message names the endpoint and what failed
     * @param cause the transport failure that ended the endpoint
     */
    public EndpointFailedException(String message, Throwable cause) {
        super(message, cause);
    }
}
