package dev.fenceline.spi;

import org.apache.pekko.actor.typed.ActorRef;
import org.apache.pekko.actor.typed.Behavior;

/**
 * Where a transport's control actors live: children of its worker's actor, on the runtime's
 * dispatcher, stopped when the worker stops (before {@link Transport#close()} is called). Given to
 * {@link Transport#start(TransportActors)} and valid only during that call, since spawning is the
 * worker actor's own act.
 */
public interface TransportActors {
    /**
     * Spawns a child of the worker actor.
     *
     * @param <T> the actor's message type
     * @param behavior the actor's initial behavior
     * @param name the actor's name, unique among this worker's transports' actors
     * @return the actor
     */
    <T> ActorRef<T> spawn(Behavior<T> behavior, String name);
}
