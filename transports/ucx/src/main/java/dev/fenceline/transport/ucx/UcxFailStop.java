package dev.fenceline.transport.ucx;

import dev.fenceline.EndpointFailedException;
import java.util.List;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * What the ucx transport does when its progress agent's loop threw an {@link Error} and the runtime
 * stopped the agent for good ({@link dev.fenceline.spi.FailStop}): nothing progresses UCT any more, so
 * every lane fails now, typed, naming the cause (its endpoint fails over, or fails), its key table's
 * heartbeat stops and the peers are told this worker leaves (their lanes fail at their next look,
 * whether or not the message reached them, rather than wait), held hardware
 * operations are reported unknown, and the agent takes no more operations. Each step is tried on its
 * own: the fault that stopped the loop may meet one of them again. The transport's close still
 * releases what is open; its connects fail at once, saying why ({@link #failure}).
 */
final class UcxFailStop {
    private static final Logger LOG = LoggerFactory.getLogger(UcxFailStop.class);

    private final String workerName;
    /** Stops the key table's heartbeat ({@link UcxRegions#stopHeartbeat}). */
    private final Runnable heartbeat;
    /** Why the transport stopped, once it did (any thread reads it). */
    private volatile String why;

    /**
     * @param workerName the worker's name
     * @param heartbeat stops the key table's heartbeat
     */
    UcxFailStop(String workerName, Runnable heartbeat) {
        this.workerName = workerName;
        this.heartbeat = heartbeat;
    }

    /** @return whether the transport stopped (any thread) */
    boolean stopped() {
        return why != null;
    }

    /** @return a failure naming why the transport stopped, or null while it runs (any thread) */
    EndpointFailedException failure() {
        String w = why;
        return w == null ? null : new EndpointFailedException(w);
    }

    /**
     * Agent thread, once.
     *
     * @param agent the agent, already refusing operations
     * @param wiring its wiring (channels, lanes, peers)
     * @param cause what the agent's loop threw
     */
    void stop(UcxAgent agent, UcxWiring wiring, Error cause) {
        why = "ucx: worker '" + workerName + "' stopped its ucx transport: its progress thread failed (" + cause + ")";
        EndpointFailedException failed = failure();
        failed.initCause(cause);
        attempt("stopping its key table's heartbeat", heartbeat);
        attempt("telling the peers it leaves", wiring::leaving);
        for (UcxChannel c : List.copyOf(wiring.allChannels())) {
            attempt("failing " + c, () -> agent.channelFailed(c, failed, false));
        }
        for (UcxLane l : List.copyOf(wiring.lanes.values())) {
            attempt("abandoning what " + l + " held", () -> l.abandonHeld(failed));
        }
    }

    private void attempt(String what, Runnable step) {
        try {
            step.run();
        } catch (RuntimeException | Error e) {
            LOG.warn("ucx {}: fail-stop: {} failed: {}", workerName, what, e.toString());
        }
    }
}
