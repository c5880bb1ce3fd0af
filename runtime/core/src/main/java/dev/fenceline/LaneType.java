package dev.fenceline;

/** What a lane is used for. One lane may carry several types (UCX's {@code lane_types}). */
public enum LaneType {
    /** Active messages, and the software (SW) RMA/atomic protocols that run over them. */
    AM,
    /** Short and copied remote memory access. */
    RMA,
    /** Bulk remote memory access (large puts and gets). */
    RMA_BW,
    /** Remote atomics. */
    AMO
}
