package dev.fenceline.testkit.history;

/**
 * One step in a recorded call's life.
 *
 * @param order position among all events of the history (one counter for every kind, so events of
 *     different calls compare)
 * @param opId the call ({@link Op#id()})
 * @param kind the step
 * @param lane the lane a fragment was handed to ({@code -1}: the calling thread did it directly
 *     under the fast path); -2 when not applicable
 * @param sequence the fragment's exactly-once sequence number, or -1 when unknown or not applicable
 * @param deduplicated ADMITTED only: the lane's target applies a re-sent copy at most once
 * @param visibilityReported ADMITTED only: the lane reports VISIBLE when its target applies it
 */
public record Event(long order, long opId, Kind kind, int lane, long sequence, boolean deduplicated,
        boolean visibilityReported) {
    /** Lane value of events that have none. */
    public static final int NO_LANE = -2;

    /** The steps of a call. */
    public enum Kind {
        /** The application made the call. */
        ISSUED,
        /** The endpoint handed a fragment to a lane (once more after each restart). */
        ADMITTED,
        /**
         * The target applied a fragment. Recorded where the runtime can tell: the {@code sim}
         * transport, and the fast path (the calling thread wrote the target's memory itself); not
         * for what a transport carries to another process.
         */
        VISIBLE,
        /** The call's completion stage completed (or, for an implicit call, the covering flush's). */
        COMPLETED
    }
}
