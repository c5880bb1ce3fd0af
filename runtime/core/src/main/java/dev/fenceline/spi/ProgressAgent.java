package dev.fenceline.spi;

import org.agrona.concurrent.Agent;
import org.agrona.concurrent.IdleStrategy;

/**
 * A polling loop a transport needs run (an inbox to serve, a UCT worker to progress): the runtime
 * runs it on an Agrona {@code AgentRunner}, never on an actor-system thread, with the threading
 * configured in {@code fenceline.progress} (a thread per agent, or one per worker for all).
 *
 * @param agent the loop: {@code doWork} returns how much it did, 0 when idle
 * @param idle how the agent's own thread waits when it is idle (in {@code dedicated} threading;
 *     shared threading uses {@code fenceline.progress.idle-strategy})
 * @param wakeup the backend's event to sleep on when idle, or null: with one, an agent on a thread
 *     of its own spins, yields, then waits on it (up to {@code fenceline.progress.idle-park-max})
 *     instead of using {@code idle}
 */
public record ProgressAgent(Agent agent, IdleStrategy idle, Wakeup wakeup) {
    /**
     * An agent with no event to sleep on.
     *
     * @param agent the loop
     * @param idle how its thread waits when idle
     */
    public ProgressAgent(Agent agent, IdleStrategy idle) {
        this(agent, idle, null);
    }
}
