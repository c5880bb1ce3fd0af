package dev.fenceline.spi.support;

import dev.fenceline.EndpointFailedException;
import dev.fenceline.FencelineException;
import dev.fenceline.OutcomeUnknownException;

/**
 * The target side of exactly-once, written once for every transport that applies operations in
 * software: an operation that carries a sequence number is applied at most once per origin
 * endpoint, and a re-sent copy is answered with the first copy's outcome (its result, or its
 * refusal) instead of being applied again. A copy below the origin's low-water mark (the origin saw
 * it complete) and one too far beyond it are refused without being applied.
 *
 * <p>One instance per target (a transport instance): it only names the target in its errors. The
 * caller owns the windows and their lifetime (which connections carry an origin, how long a window
 * outlives them) and holds a window's lock while applying through it if several threads share it.
 */
public final class ExactlyOnce {
    /** One operation, applied to the target's memory or handlers. */
    @FunctionalInterface
    public interface Operation {
        /**
         * @return the fetched value (atomics), or 0
         * @throws FencelineException if the target refuses it (bad key, range, handler)
         */
        long apply();
    }

    private final String target;
    private final int windowSize;

    /**
     * @param target names the target in errors, e.g. {@code tcp worker 'b'}
     * @param windowSize the windows' {@code maxSpread}, as {@code fenceline.exactly-once.window} says
     */
    public ExactlyOnce(String target, int windowSize) {
        this.target = target;
        this.windowSize = windowSize;
    }

    /** @return a new window for one origin endpoint */
    public DedupWindow newWindow() {
        return new DedupWindow(windowSize);
    }

    /**
     * @param budget the storage the window draws on, shared with the same peer's other windows
     * @return a new window for one origin endpoint, or null if the budget cannot hold one more
     */
    public DedupWindow newWindow(DedupWindow.Budget budget) {
        return DedupWindow.within(windowSize, budget);
    }

    /**
     * @param budget the storage the window draws on, shared with the same peer's other windows
     * @param clock nanoseconds, for how long the window keeps storage it grew (its owner's clock:
     *     virtual under a deterministic simulation)
     * @return a new window for one origin endpoint, or null if the budget cannot hold one more
     */
    DedupWindow newWindow(DedupWindow.Budget budget, java.util.function.LongSupplier clock) {
        return DedupWindow.within(windowSize, budget, clock);
    }

    /**
     * The first half of {@link #apply} for an operation applied asynchronously: decides whether
     * this copy is to run and, if so, marks it running, so that a copy arriving meanwhile (over
     * another lane) is refused instead of run a second time. The caller runs it, then reports the
     * outcome with {@link #finish}.
     *
     * @param window the origin endpoint's window (the caller holds its lock)
     * @param origin the origin endpoint's id, for errors
     * @param sequence the operation's sequence number (non-negative)
     * @param lowWater the origin's low-water mark that the operation carried
     * @return true if the caller must run it; false if a copy was applied before (answer with
     *     {@code window.result(sequence)})
     * @throws FencelineException the first copy's refusal, an {@link OutcomeUnknownException} for a
     *     stale copy or one whose first copy is still running, or a plain one beyond the window
     */
    public boolean begin(DedupWindow window, long origin, long sequence, long lowWater) {
        return begin(window, origin, sequence, window.lookup(sequence, lowWater));
    }

    private boolean begin(DedupWindow window, long origin, long sequence, DedupWindow.Seen seen) {
        if (seen == DedupWindow.Seen.NEW) {
            refuseIfAsked(window, origin, sequence);
            window.markRunning(sequence);
            return true;
        }
        if (seen == DedupWindow.Seen.DUPLICATE) {
            return false;
        }
        throw refusal(seen, window, origin, sequence);
    }

    /**
     * Records the outcome of an operation {@link #begin} let run. A mark that moved past it meanwhile
     * (its origin gave up on it) leaves nothing to record.
     *
     * @param window the origin endpoint's window (the caller holds its lock)
     * @param sequence the operation's sequence number
     * @param value its result, if it succeeded
     * @param error its refusal, or null if it succeeded
     */
    public void finish(DedupWindow window, long sequence, long value, FencelineException error) {
        if (sequence >= window.lowWater()) {
            if (error != null) {
                window.recordFailure(sequence, error);
            } else {
                window.record(sequence, value);
            }
        }
        window.finished(sequence); // copies that waited for it are answered from the window now
    }

    /** What {@link #beginOutsideOrWait} decided for a copy. */
    public enum Start {
        /** Run it, then {@link #finishOutside}. */
        RUN,
        /** A copy was applied before: answer with {@code window.result(sequence)}. */
        APPLIED_BEFORE,
        /**
         * Its first copy runs now: it must not run, and its answer is the first copy's outcome, not
         * known yet. Wait for it ({@link DedupWindow#whenFinished}), then decide again.
         */
        FIRST_COPY_RUNNING
    }

    /**
     * As {@link #beginOutside}, for a caller that can make a copy wait without blocking a thread (tcp
     * holds the connection's later frames, as it does while a handler runs): a copy whose first one
     * runs now is not refused with an {@link OutcomeUnknownException} but told to wait, so that it
     * is answered with the first copy's outcome once that is recorded. The caller registers the wait
     * under the same lock ({@link DedupWindow#whenFinished}) and calls this again when it ends.
     *
     * @param window the origin endpoint's window (the caller holds its lock)
     * @param origin the origin endpoint's id, for errors
     * @param sequence the operation's sequence number (non-negative)
     * @param lowWater the origin's low-water mark that the operation carried
     * @return what to do with this copy
     * @throws FencelineException as {@link #begin} does, but never for a first copy still running
     */
    public Start beginOutsideOrWait(DedupWindow window, long origin, long sequence, long lowWater) {
        DedupWindow.Seen seen = window.lookup(sequence, lowWater);
        if (seen == DedupWindow.Seen.RUNNING) {
            return Start.FIRST_COPY_RUNNING;
        }
        if (!begin(window, origin, sequence, seen)) {
            return Start.APPLIED_BEFORE;
        }
        window.runningOutsideStarted();
        return Start.RUN;
    }

    /**
     * As {@link #begin}, for an operation that will run without the window's lock held (a handler
     * on a thread of its own): while it runs, the window is kept past its holders and the linger
     * ({@link ExactlyOnceWindows}). Every {@code true} must be followed by {@link #finishOutside}.
     *
     * @param window the origin endpoint's window (the caller holds its lock)
     * @param origin the origin endpoint's id, for errors
     * @param sequence the operation's sequence number (non-negative)
     * @param lowWater the origin's low-water mark that the operation carried
     * @return true if the caller must run it; false if a copy was applied before
     * @throws FencelineException as {@link #begin} does
     */
    public boolean beginOutside(DedupWindow window, long origin, long sequence, long lowWater) {
        if (!begin(window, origin, sequence, lowWater)) {
            return false;
        }
        window.runningOutsideStarted();
        return true;
    }

    /**
     * As {@link #finish}, for an operation {@link #beginOutside} let run.
     *
     * @param window the origin endpoint's window (the caller holds its lock)
     * @param sequence the operation's sequence number
     * @param value its result, if it succeeded
     * @param error its refusal, or null if it succeeded
     */
    public void finishOutside(DedupWindow window, long sequence, long value, FencelineException error) {
        window.runningOutsideEnded();
        finish(window, sequence, value, error);
    }

    /**
     * Applies {@code op} unless a copy of it was applied or refused before.
     *
     * @param window the origin endpoint's window, or null if the operation carries no sequence number
     *     (then it is simply applied)
     * @param origin the origin endpoint's id, for errors
     * @param sequence the operation's sequence number ({@code < 0}: none)
     * @param lowWater the origin's low-water mark that the operation carried
     * @param op applies it
     * @return its result, or the first copy's
     * @throws FencelineException the target's refusal (this copy's or the first's), an
     *     {@link OutcomeUnknownException} for a stale copy, or a plain one beyond the window
     */
    public long apply(DedupWindow window, long origin, long sequence, long lowWater, Operation op) {
        if (window == null || sequence < 0) {
            return op.apply();
        }
        DedupWindow.Seen seen = window.lookup(sequence, lowWater);
        if (seen == DedupWindow.Seen.DUPLICATE) {
            return window.result(sequence);
        }
        if (seen != DedupWindow.Seen.NEW) {
            throw refusal(seen, window, origin, sequence);
        }
        refuseIfAsked(window, origin, sequence);
        long value;
        try {
            value = op.apply();
        } catch (FencelineException e) {
            window.recordFailure(sequence, e);
            throw e;
        }
        window.record(sequence, value);
        return value;
    }

    /**
     * As {@link #apply}, but the window's lock is taken only to decide and to record, not while
     * {@code op} runs: for an operation that runs a user's handler, which may take long, so that a
     * copy arriving meanwhile over another transport (whose thread may serve many connections) is
     * refused at once with an {@link OutcomeUnknownException} rather than made to wait for it.
     * The caller must not hold the window's lock.
     *
     * @param window the origin endpoint's window, or null if the operation carries no sequence number
     * @param origin the origin endpoint's id, for errors
     * @param sequence the operation's sequence number ({@code < 0}: none)
     * @param lowWater the origin's low-water mark that the operation carried
     * @param op applies it
     * @return its result, or the first copy's
     * @throws FencelineException as {@link #apply} does, or an {@link OutcomeUnknownException} while
     *     the first copy still runs
     */
    public long applyOutsideLock(DedupWindow window, long origin, long sequence, long lowWater, Operation op) {
        if (window == null || sequence < 0) {
            return op.apply();
        }
        synchronized (window) {
            if (!beginOutside(window, origin, sequence, lowWater)) {
                return window.result(sequence);
            }
        }
        return runBegun(window, origin, sequence, op);
    }

    /**
     * Runs an operation that {@link #beginOutside} or {@link #beginOutsideOrWait} let run, without
     * the window's lock, and records its outcome ({@link #finishOutside}). The caller must not hold
     * the window's lock.
     *
     * @param window the origin endpoint's window
     * @param origin the origin endpoint's id, for errors
     * @param sequence the operation's sequence number
     * @param op applies it
     * @return its result
     * @throws FencelineException the target's refusal, recorded for a copy sent again
     */
    public long runBegun(DedupWindow window, long origin, long sequence, Operation op) {
        long value;
        try {
            value = op.apply();
        } catch (FencelineException e) {
            synchronized (window) {
                finishOutside(window, sequence, 0, e);
            }
            throw e;
        } catch (RuntimeException | Error e) {
            synchronized (window) { // a copy sent again must not run it a second time either
                finishOutside(window, sequence, 0, new OutcomeUnknownException(target + ": operation " + sequence
                        + " of endpoint " + Long.toHexString(origin) + " failed while it was applied: " + e));
            }
            throw e;
        }
        synchronized (window) {
            finishOutside(window, sequence, value, null);
        }
        return value;
    }

    /**
     * A copy the target cannot apply for a reason of its own (it could not assemble it, say): that
     * reason answers it only if the window never saw its sequence number; a copy of an operation
     * applied, refused or running before gets what any copy gets, or the origin would be told that
     * an operation whose first copy ran was not applied.
     *
     * @param window the origin endpoint's window (the caller holds its lock)
     * @param origin the origin endpoint's id, for errors
     * @param sequence the copy's sequence number (non-negative)
     * @param lowWater the origin's low-water mark that the copy carried
     * @param why why this copy cannot be applied
     * @return the first copy's result, if it was applied
     * @throws FencelineException {@code why} if the window never saw it; else the first copy's
     *     refusal, or an {@link OutcomeUnknownException} while it runs or once it is stale
     */
    public long answerUnapplied(DedupWindow window, long origin, long sequence, long lowWater, FencelineException why) {
        DedupWindow.Seen seen = window.lookup(sequence, lowWater);
        if (seen == DedupWindow.Seen.NEW) {
            throw why;
        }
        if (seen == DedupWindow.Seen.DUPLICATE) {
            return window.result(sequence);
        }
        throw refusal(seen, window, origin, sequence);
    }

    /**
     * For an operation without a sequence number (a get), which the windows do not track: refuses
     * it if its origin's worker is refused ({@link DedupWindow#refuse}).
     *
     * @param window the origin endpoint's window
     * @param origin the origin endpoint's id, for the error
     * @throws EndpointFailedException if the origin's worker is refused
     */
    public void checkNotRefused(DedupWindow window, long origin) {
        String why = window.refusal();
        if (why != null) {
            throw refused("an operation of endpoint " + Long.toHexString(origin), why);
        }
    }

    /**
     * A new operation of an origin whose worker this worker refuses ({@link DedupWindow#refuse}) is
     * not applied, now or ever: recorded as refused, so a copy sent again gets the same answer.
     */
    private void refuseIfAsked(DedupWindow window, long origin, long sequence) {
        String why = window.refusal();
        if (why != null) {
            EndpointFailedException e = refused("operation " + sequence + " of endpoint " + Long.toHexString(origin), why);
            window.recordFailure(sequence, e);
            throw e;
        }
    }

    private EndpointFailedException refused(String what, String why) {
        return new EndpointFailedException(target + ": " + what + " is refused, not applied: " + why);
    }

    /** Why a copy that {@link DedupWindow#lookup} did not find new and not applied is not run. */
    private FencelineException refusal(DedupWindow.Seen seen, DedupWindow window, long origin, long sequence) {
        String op = target + ": operation " + sequence + " of endpoint " + Long.toHexString(origin);
        return switch (seen) {
            case FAILED_BEFORE -> window.failure(sequence);
            case STALE -> new OutcomeUnknownException(target + ": a stale copy of operation " + sequence
                    + " of endpoint " + Long.toHexString(origin) + ", which its origin saw complete, arrived; not applied"
                    + " again");
            case RUNNING -> new OutcomeUnknownException(op + " is being applied now by its first copy; this copy is"
                    + " not run, and the first one's outcome is not known yet");
            case FULL -> new FencelineException(op + " is more than fenceline.exactly-once.window = " + windowSize + " beyond its"
                    + " oldest incomplete operation (" + window.lowWater() + "); not applied");
            case OVER_BUDGET -> new FencelineException(op + " cannot be tracked: its peer's dedup state is at its"
                    + " bound (" + window.budget().describe() + "); not applied");
            default -> throw new IllegalArgumentException("not a refusal: " + seen);
        };
    }
}
