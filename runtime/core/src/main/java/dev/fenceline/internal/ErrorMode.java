package dev.fenceline.internal;

/** {@code fenceline.endpoint.error-mode}. */
public enum ErrorMode {
    /** No guarantees after a failure. */
    NONE,
    /** Every request completes, with an error if the peer is gone. */
    PEER,
    /** Lane failures are hidden while a live lane remains; otherwise like {@link #PEER}. */
    FAILOVER
}
