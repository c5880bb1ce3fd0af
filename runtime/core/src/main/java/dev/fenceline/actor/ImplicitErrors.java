package dev.fenceline.actor;

import dev.fenceline.FencelineException;
import dev.fenceline.OutcomeUnknownException;
import dev.fenceline.internal.VarHandles;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.util.Map;
import java.util.concurrent.ConcurrentSkipListMap;

/**
 * Errors of operations without a completion of their own (implicit puts, posted atomics and active
 * messages), by submission number, until the first flush submitted after them reports them. Any
 * thread may add (the actor, a fast-path caller, a lane's answering thread); flushes take them.
 */
final class ImplicitErrors {
    private static final VarHandle ERRORS =
            VarHandles.field(MethodHandles.lookup(), "errors", ConcurrentSkipListMap.class);

    /** Made at the first error: most endpoints never have one, and a map costs about 100 bytes. */
    private volatile ConcurrentSkipListMap<Long, FencelineException> errors;

    /**
     * @param e the failed operation's error, kept for the first flush submitted after it
     * @param number its submission number (for the fast path: the submission count when it failed, so
     *     that it sorts after everything submitted before it)
     */
    void failed(FencelineException e, long number) {
        // Two errors under one number (a lane's abandoned messages all go under 0): one whose operation
        // may have been applied wins, or the flush would say of it that it was not.
        VarHandles.<ConcurrentSkipListMap<Long, FencelineException>>made(ERRORS, this, ConcurrentSkipListMap::new)
                .merge(number, e, (kept, added) -> unknown(added) && !unknown(kept) ? added : kept);
    }

    private static boolean unknown(FencelineException e) {
        return e instanceof OutcomeUnknownException;
    }

    /**
     * @param before a flush's submission number (exclusive bound)
     * @return the first error of an operation submitted before it, or null; but the first
     *     {@link OutcomeUnknownException} among them if there is one (an operation that may have been
     *     applied must not be reported by a flush that says none was); the errors before it are
     *     consumed (one flush reports one)
     */
    FencelineException take(long before) {
        ConcurrentSkipListMap<Long, FencelineException> m = errors;
        if (m == null) {
            return null;
        }
        Map.Entry<Long, FencelineException> first = m.firstEntry();
        if (first == null || first.getKey() >= before) {
            return null;
        }
        Map<Long, FencelineException> reported = m.headMap(before);
        FencelineException e = first.getValue();
        if (!unknown(e)) {
            for (FencelineException later : reported.values()) {
                if (unknown(later)) {
                    e = later;
                    break;
                }
            }
        }
        reported.clear();
        return e;
    }

    /**
     * What a flush the endpoint's end fails reports: an implicit operation before it that may have
     * been applied, if one failed so (taken), else the end, which would say that none was applied.
     *
     * @param before the flush's submission number (exclusive bound)
     * @param end the endpoint's end
     * @return the error to fail the flush with
     */
    FencelineException endOfFlush(long before, FencelineException end) {
        FencelineException first = take(before);
        return first instanceof OutcomeUnknownException ? first : end;
    }

    /**
     * The same for a flush failed on a caller's thread: nothing is taken, since a flush the actor
     * holds still reports its own (taken here, it would succeed).
     *
     * @param before the flush's submission number (exclusive bound)
     * @param end the endpoint's end
     * @return the first implicit operation before it that may have been applied, else the end
     */
    FencelineException endOfFlushSeen(long before, FencelineException end) {
        ConcurrentSkipListMap<Long, FencelineException> m = errors;
        if (m != null) {
            for (FencelineException e : m.headMap(before).values()) {
                if (unknown(e)) {
                    return e;
                }
            }
        }
        return end;
    }
}
