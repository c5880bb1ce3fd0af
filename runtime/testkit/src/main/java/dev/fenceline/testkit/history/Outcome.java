package dev.fenceline.testkit.history;

/**
 * How a recorded call completed.
 *
 * @param completionOrder completion order over the whole history (completions are recorded in the
 *     order the runtime completed them)
 * @param value the fetched value, or 0
 * @param read the bytes a get returned, or null
 * @param error the failure, or null
 */
public record Outcome(long completionOrder, long value, byte[] read, Throwable error) {
    /** @return whether it completed successfully */
    public boolean ok() {
        return error == null;
    }
}
