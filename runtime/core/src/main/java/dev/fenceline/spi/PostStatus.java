package dev.fenceline.spi;

/** The outcome of starting an operation or flush on a lane. Errors are exceptions or listener calls. */
public enum PostStatus {
    /** Done and remotely visible; no completion callback follows. */
    COMPLETED,
    /** Started; the listener will be told the outcome. */
    IN_PROGRESS,
    /** The lane has no room now; retry after {@link LaneListener#onReady()}. */
    NO_RESOURCE
}
