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
 */
public record ProgressAgent(Agent agent, IdleStrategy idle) {
}
