package dev.fenceline.transport.tcp;

/** A frame from a peer breaks the wire format; the connection that carried it is closed. */
final class MalformedFrameException extends Exception {
    private static final long serialVersionUID = 1L;

    MalformedFrameException(String message) {
        super(message, null, false, false);
    }
}
