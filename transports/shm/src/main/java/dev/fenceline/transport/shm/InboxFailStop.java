package dev.fenceline.transport.shm;

import dev.fenceline.EndpointFailedException;
import dev.fenceline.spi.support.Heartbeat;
import java.util.ArrayList;
import java.util.function.Supplier;
import org.apache.pekko.actor.typed.ActorRef;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The shm transport's fail-stop when a process that maps this worker's inbox wrote a record length
 * outside the ring's framing (no record past it can be found), or when the polling thread's loop
 * threw an {@link Error} and the runtime stopped it for good ({@link dev.fenceline.spi.FailStop}: a
 * fault in a mapping a peer shrank, say). Said once, by the polling thread: the
 * inbox is read no more, its segment is marked broken (its peers fail their lanes to it at their
 * next liveness tick rather than wait for answers that cannot come), the worker's heartbeat stops,
 * and its own ring lanes, whose answers would come here, are reset now (a peer's heartbeat would keep
 * them up), as are the connects waiting for an answer here. Its cma lanes, which need no inbox, go on.
 */
final class InboxFailStop {
    private static final Logger LOG = LoggerFactory.getLogger(InboxFailStop.class);

    private final String workerName;
    private final Inbox inbox;
    private final ShmLaneTable lanes;
    private final Supplier<ActorRef<ShmTransportActor.Command>> actor;
    /** Set by the polling thread: nothing is read any more; the transport refuses connects once it is set. */
    private volatile boolean stopped;
    /** Why, for the failures: set before {@link #stopped}. */
    private volatile String why = "its inbox, where its lanes' answers come, was written outside the ring's protocol";

    /**
     * @param workerName the worker's name, for the log and the failures
     * @param inbox the worker's own inbox
     * @param lanes the worker's ring lanes
     * @param actor reads the transport's control actor: null until the transport started it
     */
    InboxFailStop(String workerName, Inbox inbox, ShmLaneTable lanes,
            Supplier<ActorRef<ShmTransportActor.Command>> actor) {
        this.workerName = workerName;
        this.inbox = inbox;
        this.lanes = lanes;
        this.actor = actor;
    }

    /** Any thread: whether the inbox broke. */
    boolean stopped() {
        return stopped;
    }

    /**
     * Polling thread, once: the record at the inbox's head lies outside the ring's framing.
     *
     * @param head what the record at the head claims ({@link InboxFraming#describeHead})
     */
    void stop(String head) {
        stopped = true;
        LOG.error("shm {}: {}: written outside the ring's protocol by a process that maps this worker's inbox;"
                + " nothing past it can be read. The worker's shm transport stops: its peers and its own ring lanes"
                + " fail over", workerName, head);
        halt();
    }

    /**
     * Polling thread, once: its loop threw (the runtime logged it and runs the loop no more).
     *
     * @param cause what it threw
     */
    void stop(Error cause) {
        if (stopped) {
            return;
        }
        why = "its polling thread failed (" + cause + ")";
        stopped = true;
        halt();
    }

    /** Each step on its own: the fault that stopped the loop may meet one of them again. */
    private void halt() {
        attempt("marking its inbox broken", inbox::markBroken);
        attempt("stopping its heartbeat", () -> Heartbeat.stop(inbox));
        for (ShmLane l : new ArrayList<>(lanes.all())) {
            // what a peer took is answered into the unread inbox: its answer is lost
            attempt("resetting " + l, () -> l.reset(failure()));
        }
        ActorRef<ShmTransportActor.Command> a = actor.get();
        if (a != null) {
            a.tell(new ShmTransportActor.InboxBroke(this::failure)); // connects waiting for an answer here fail now
        }
    }

    private void attempt(String what, Runnable step) {
        try {
            step.run();
        } catch (RuntimeException | Error e) {
            LOG.warn("shm {}: fail-stop: {} failed: {}", workerName, what, e.toString());
        }
    }

    /** What a lane, or a connect, of a worker whose shm transport stopped fails with. */
    EndpointFailedException failure() {
        return new EndpointFailedException("shm: worker '" + workerName + "' stopped its shm transport: " + why);
    }
}
