package dev.fenceline.internal;

/** The classes of operation that protocol selection distinguishes. */
public enum OpClass {
    /** Put or get up to {@code protocol.short-max}. */
    RMA_SHORT,
    /** Put or get between short-max and the bandwidth threshold. */
    RMA_MEDIUM,
    /** Put or get from {@code protocol.bandwidth-threshold} on. */
    RMA_LARGE,
    /** Any atomic. */
    ATOMIC,
    /** Active message. */
    ACTIVE_MESSAGE
}
