package dev.fenceline.transport.ucx;

/**
 * Events of a UCT worker were lost: the native library had no memory for them, or its event buffer
 * no longer holds records of its own making. A completion, an answer, a READY or an endpoint's
 * failure that lanes wait for may be among them, and none can be had again, so this is an
 * {@link Error}: the progress agent that drains the worker stops for good, and its lanes fail
 * ({@link UcxFailStop}), rather than wait for what will not come.
 */
final class UctEventsLost extends Error {
    private static final long serialVersionUID = 1L;

    UctEventsLost(String message) {
        super(message);
    }
}
