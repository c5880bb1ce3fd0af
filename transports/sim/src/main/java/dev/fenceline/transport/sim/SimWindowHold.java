package dev.fenceline.transport.sim;

import dev.fenceline.FencelineException;
import dev.fenceline.spi.support.ExactlyOnceWindows;
import java.util.UUID;

/**
 * The exactly-once window a sim target holds for one lane's origin endpoint: taken at the lane's
 * first deduplicated delivery, let go (to linger, for copies sent again elsewhere) when the lane
 * closes; a delivery after the close holds it only while it is applied. Any thread.
 */
final class SimWindowHold {
    private final ExactlyOnceWindows windows;
    private final String workerName;
    /** Held for the lane, or null before its first delivery and after its close. */
    private ExactlyOnceWindows.Window held;
    private boolean closed;

    /**
     * @param windows the target worker's windows
     * @param workerName the target worker's name, for refusals
     */
    SimWindowHold(ExactlyOnceWindows windows, String workerName) {
        this.windows = windows;
        this.workerName = workerName;
    }

    /** What one delivery does with the window. */
    interface Use {
        /**
         * @param w the origin's window
         * @return the operation's result
         */
        long apply(ExactlyOnceWindows.Window w);
    }

    /**
     * Runs {@code use} with the window of {@code origin}, holding it for the lane (or, once the lane
     * is closed, only meanwhile).
     *
     * @param worker the origin worker
     * @param origin the origin endpoint
     * @param use what the delivery does with it
     * @return what {@code use} returned
     * @throws FencelineException if the bounds cannot hold another window (not applied), or as {@code use}
     */
    long with(UUID worker, long origin, Use use) {
        ExactlyOnceWindows.Window w;
        boolean forThisOnly = false;
        synchronized (this) {
            if (held != null && held.origin() == origin) {
                w = held;
            } else {
                w = retain(worker, origin);
                if (closed) {
                    forThisOnly = true;
                } else {
                    if (held != null) {
                        windows.release(held);
                    }
                    held = w;
                }
            }
        }
        try {
            return use.apply(w);
        } finally {
            if (forThisOnly) {
                windows.release(w);
            }
        }
    }

    private ExactlyOnceWindows.Window retain(UUID worker, long origin) {
        ExactlyOnceWindows.Window w = windows.retain(worker, ExactlyOnceWindows.MEMBER, origin);
        if (w == null) {
            throw new FencelineException("sim worker '" + workerName + "': no room for the exactly-once window of"
                    + " endpoint " + Long.toHexString(origin) + " (fenceline.exactly-once.entries-per-peer or"
                    + " .entries); not applied");
        }
        return w;
    }

    /** The lane closed: the window goes (it lingers for copies sent again). */
    synchronized void close() {
        closed = true;
        if (held != null) {
            windows.release(held);
            held = null;
        }
    }
}
