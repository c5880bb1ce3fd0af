package dev.fenceline.actor;

import dev.fenceline.internal.ThreadCounters;
import dev.fenceline.internal.VarHandles;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;

/**
 * What an endpoint's {@link DirectLedger} counts, told to its worker's running totals as it counts:
 * messages sent by calling threads, answers counted by lanes' threads, and posted operations the actor
 * took back. Each side keeps the row its thread used last ({@link WorkerCounts#row(VarHandle, Object)}),
 * so a direct message's counts need no thread-local lookup.
 */
final class DirectCounts {
    private static final VarHandle SENDING_ROW = VarHandles.field(MethodHandles.lookup(), "sendingRow",
            ThreadCounters.Row.class);
    private static final VarHandle ANSWERING_ROW = VarHandles.field(MethodHandles.lookup(), "answeringRow",
            ThreadCounters.Row.class);

    private final WorkerCounts worker;
    /** The worker's row of the thread that queued last. */
    @SuppressWarnings("unused") // through SENDING_ROW
    private ThreadCounters.Row sendingRow;
    /** The worker's row of the thread that counted an answer (or took operations back) last. */
    @SuppressWarnings("unused") // through ANSWERING_ROW
    private ThreadCounters.Row answeringRow;

    /** @param worker the worker's running totals */
    DirectCounts(WorkerCounts worker) {
        this.worker = worker;
    }

    /** A direct operation was queued, on the calling thread. */
    void sent() {
        worker.row(SENDING_ROW, this).add(Totals.DIRECT_SENT, 1);
    }

    /** @param n posted operations the actor took back: counted by it from now on */
    void tookBack(long n) {
        worker.row(ANSWERING_ROW, this).add(Totals.DIRECT_SENT, -n);
    }

    /** An answer counted as a success. */
    void succeeded() {
        worker.row(ANSWERING_ROW, this).add(Totals.DIRECT_SUCCEEDED, 1);
    }

    /** @param n answers counted as failures (abandoned ones among them) */
    void failed(long n) {
        worker.row(ANSWERING_ROW, this).add(Totals.DIRECT_FAILED, n);
    }
}
