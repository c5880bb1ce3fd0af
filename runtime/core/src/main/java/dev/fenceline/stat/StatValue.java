package dev.fenceline.stat;

/**
 * One counter read from a counters file.
 *
 * @param counter what it measures
 * @param owner the worker's or endpoint's name
 * @param value its value when read
 */
public record StatValue(StatCounter counter, String owner, long value) {
}
