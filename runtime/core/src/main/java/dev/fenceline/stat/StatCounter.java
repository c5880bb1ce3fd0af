package dev.fenceline.stat;

/** What a counter in a counters file measures; its type id is what the file stores. */
public enum StatCounter {
    /** A worker's operations issued. */
    OPERATIONS(Scope.WORKER, 1, "ops", "operations issued"),
    /** A worker's operations completed successfully. */
    COMPLETED(Scope.WORKER, 2, "done", "operations completed"),
    /** A worker's operations completed with an error. */
    FAILED(Scope.WORKER, 3, "failed", "operations failed"),
    /** A worker's operations issued and not yet completed. */
    OUTSTANDING(Scope.WORKER, 4, "outst", "operations outstanding"),
    /** A worker's endpoint flushes completed. */
    FLUSHES(Scope.WORKER, 5, "flushes", "flushes completed"),
    /** A worker's strong fences started. */
    STRONG_FENCES(Scope.WORKER, 6, "fences", "strong fences"),
    /** A worker's lane-table changes. */
    RECONFIGURATIONS(Scope.WORKER, 7, "reconf", "reconfigurations"),
    /** A worker's requests restarted after a reconfiguration. */
    RESTARTS(Scope.WORKER, 8, "restarts", "restarts"),
    /** A worker's operations done on the fast path. */
    FAST_PATH(Scope.WORKER, 9, "fastpath", "fast-path operations"),
    /** A worker's open endpoints. */
    OPEN_ENDPOINTS(Scope.WORKER, 10, "endpoints", "open endpoints"),
    /** An endpoint's operations issued. */
    ENDPOINT_OPERATIONS(Scope.ENDPOINT, 101, "ops", "operations issued"),
    /** An endpoint's operations outstanding. */
    ENDPOINT_OUTSTANDING(Scope.ENDPOINT, 102, "outst", "operations outstanding"),
    /** An endpoint's operations failed. */
    ENDPOINT_FAILED(Scope.ENDPOINT, 103, "failed", "operations failed"),
    /** Payload bytes an endpoint posted on its lanes. */
    ENDPOINT_BYTES(Scope.ENDPOINT, 104, "bytes", "bytes posted on lanes"),
    /** An endpoint's live lanes. */
    ENDPOINT_LIVE_LANES(Scope.ENDPOINT, 105, "live", "live lanes"),
    /** The 99th percentile of an endpoint's flush latency, microseconds. */
    ENDPOINT_FLUSH_P99_US(Scope.ENDPOINT, 106, "flush-p99-us", "flush latency p99, us");

    /** Whose figure a counter is. */
    public enum Scope {
        /** A worker's. */
        WORKER,
        /** An open endpoint's. */
        ENDPOINT
    }

    private final Scope scope;
    private final int typeId;
    private final String column;
    private final String description;

    StatCounter(Scope scope, int typeId, String column, String description) {
        this.scope = scope;
        this.typeId = typeId;
        this.column = column;
        this.description = description;
    }

    /** @return whose figure it is */
    public Scope scope() {
        return scope;
    }

    /** @return the type id the file stores */
    public int typeId() {
        return typeId;
    }

    /** @return a short column heading */
    public String column() {
        return column;
    }

    /** @return what it counts, for the counter's label */
    public String description() {
        return description;
    }

    /**
     * @param typeId a type id read from a file
     * @return the counter, or null if this version does not know it
     */
    public static StatCounter ofType(int typeId) {
        for (StatCounter c : values()) {
            if (c.typeId == typeId) {
                return c;
            }
        }
        return null;
    }
}
