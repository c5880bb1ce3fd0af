package dev.fenceline.spi;

/**
 * A clock kept by an actor system's scheduler. A scheduler that keeps its own time (the test
 * kit's deterministic simulation runs on virtual time) implements this, and the runtime's
 * actors then read that time instead of {@link System#nanoTime()}, so that a timeout means the
 * same under the simulation as it does for real. The SPI's only tie to a scheduler: it names no
 * Pekko type.
 */
public interface NanoClock {
    /** @return the current time in nanoseconds, on an arbitrary origin (like {@link System#nanoTime()}) */
    long nanoTime();
}
