package dev.fenceline.internal;

/** {@code fenceline.fence.mode}, with {@code auto} resolved. */
public enum FenceMode {
    /** Ordering from the one ordered lane that carries all RMA and atomics. */
    WEAK,
    /** Every required fence flushes all live lanes. */
    STRONG,
    /** Epochs and per-endpoint lane tracking (UCX {@code ep_based}). */
    ENDPOINT
}
