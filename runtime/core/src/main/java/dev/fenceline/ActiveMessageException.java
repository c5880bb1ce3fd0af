package dev.fenceline;

/**
 * An active message could not be delivered: no handler is registered for its id at the target, the
 * id is out of range, or the handler threw.
 */
public class ActiveMessageException extends FencelineException {
    private static final long serialVersionUID = 1L;

    /** @param message names the id and the worker */
    public ActiveMessageException(String message) {
        super(message);
    }
}
