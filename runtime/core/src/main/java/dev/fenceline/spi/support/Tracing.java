package dev.fenceline.spi.support;

import dev.fenceline.spi.RequestTrace;
import java.util.function.Supplier;

/** The thread-local hand-over behind {@link RequestTrace#during}; the runtime reads it at submission. */
public final class Tracing {
    private static final ThreadLocal<RequestTrace> NEXT = new ThreadLocal<>();
    /** False until anyone traces: keeps the untraced path to one volatile read. */
    private static volatile boolean used;

    private Tracing() {
    }

    /**
     * @param <T> what the call returns
     * @param trace the observer of the first request {@code call} issues on this thread
     * @param call one endpoint call
     * @return what it returned
     */
    public static <T> T during(RequestTrace trace, Supplier<T> call) {
        used = true;
        RequestTrace outer = NEXT.get();
        NEXT.set(trace);
        try {
            return call.get();
        } finally {
            if (outer == null) {
                NEXT.remove();
            } else {
                NEXT.set(outer); // an enclosing call's request is still to come
            }
        }
    }

    /**
     * A check for the hottest paths, before {@link #take}: a method whose signature names no class
     * that an untraced process never loads, so the JIT inlines it where it would not inline
     * {@code take} (its return type is not loaded until someone traces), and the untraced path
     * stays one read without a call.
     *
     * @return whether anyone in this process has traced a request
     */
    public static boolean used() {
        return used;
    }

    /** @return the trace for the request this thread is issuing, or null; taken: the next request gets none */
    public static RequestTrace take() {
        if (!used) {
            return null;
        }
        RequestTrace t = NEXT.get();
        if (t != null) {
            NEXT.remove();
        }
        return t;
    }
}
