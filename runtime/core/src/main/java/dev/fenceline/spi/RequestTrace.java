package dev.fenceline.spi;

import java.util.function.Supplier;

/**
 * Observes one request inside the runtime, for test kits that check more than an application can
 * see: when the endpoint hands the request (or one of its fragments) to a lane, and when a target
 * that can tell applies it. Attach one to the next request a thread issues with
 * {@link #during(RequestTrace, Supplier)}: the first request submitted (or performed on the fast
 * path) during the call takes it. Requests issued without one cost a single volatile read.
 *
 * <p>Callbacks run on runtime threads (the endpoint actor, a transport's delivery thread, or the
 * issuing thread on the fast path) and must be quick and thread-safe.
 */
public interface RequestTrace {
    /** The lane number {@link #admitted} reports for an operation the issuing thread performed itself. */
    int DIRECT = -1;

    /**
     * The endpoint handed a fragment to a lane (again, after a restart).
     *
     * @param lane the lane's index, or {@link #DIRECT} for the fast path by grant
     * @param sequence the fragment's exactly-once sequence number, or -1 on the fast path
     * @param deduplicated whether the lane's target applies a re-sent copy at most once (a lane
     *     without it may apply a restarted put or get again, legitimately)
     * @param visibilityReported whether {@link #visible} will follow when the target applies it
     */
    void admitted(int lane, long sequence, boolean deduplicated, boolean visibilityReported);

    /**
     * A target applied a fragment: its effect is visible there from now on. Reported by transports
     * that apply in this JVM and know it (the test kit's {@code sim}, and the fast path).
     *
     * @param sequence the fragment's sequence number, or -1 on the fast path
     */
    void visible(long sequence);

    /**
     * Runs {@code call}, attaching {@code trace} to the first request it issues on this thread.
     *
     * @param <T> what the call returns
     * @param trace the observer
     * @param call one endpoint call
     * @return what it returned
     */
    static <T> T during(RequestTrace trace, Supplier<T> call) {
        return dev.fenceline.spi.support.Tracing.during(trace, call);
    }
}
