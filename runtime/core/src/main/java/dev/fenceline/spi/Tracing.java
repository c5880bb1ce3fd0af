package dev.fenceline.spi;

import java.util.function.Supplier;

/** The thread-local hand-over behind {@link RequestTrace#during}; the runtime reads it at submission. */
public final class Tracing {
    private static final ThreadLocal<RequestTrace> NEXT = new ThreadLocal<>();
    /** False until anyone traces: keeps the untraced path to one volatile read. */
    private static volatile boolean used;

    private Tracing() {
    }

    static <T> T during(RequestTrace trace, Supplier<T> call) {
        used = true;
        RequestTrace outer = NEXT.get();
        NEXT.set(trace);
        try {
            return call.get();
        } finally {
            if (outer == null) {
                NEXT.remove();
            } else {
                NEXT.set(outer);
            }
        }
    }

    /** @return the trace for the request this thread is issuing, or null */
    public static RequestTrace current() {
        return used ? NEXT.get() : null;
    }
}
