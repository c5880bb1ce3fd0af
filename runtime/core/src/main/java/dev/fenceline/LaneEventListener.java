package dev.fenceline;

/**
 * Hears about every endpoint of a worker losing, regaining and gaining lanes
 * ({@link Worker#addLaneEventListener}). Called on the actor system's dispatcher, one event at a
 * time and in the order the endpoints applied them, never on an endpoint's own thread; a listener
 * that throws is logged and keeps receiving.
 */
@FunctionalInterface
public interface LaneEventListener {
    /** @param event what happened */
    void onLaneEvent(LaneEvent event);
}
