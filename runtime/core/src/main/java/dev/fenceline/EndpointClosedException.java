package dev.fenceline;

/** An operation was issued on an endpoint (or worker) that the user closed. */
public class EndpointClosedException extends FencelineException {
    private static final long serialVersionUID = 1L;

    /** @param message names the endpoint or worker */
    public EndpointClosedException(String message) {
        super(message);
    }
}
