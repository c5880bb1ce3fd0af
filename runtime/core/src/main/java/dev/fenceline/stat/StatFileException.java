package dev.fenceline.stat;

import dev.fenceline.FencelineException;

/** A counters file that cannot be read: missing, not one, from another version, or damaged. */
public final class StatFileException extends FencelineException {
    private static final long serialVersionUID = 1L;

    /** @param message which file and what is wrong with it */
    public StatFileException(String message) {
        super(message);
    }
}
