package dev.fenceline;

import java.util.List;

/**
 * An endpoint's figures, a snapshot: what its requests did, how its fast path was used, how long
 * flushes and strong fences took, and what each lane did. Monotonic except {@code outstanding}.
 *
 * @param endpoint the endpoint's name
 * @param operations operations issued (RMA, atomics, active messages), the fast path's included
 * @param completed operations completed successfully
 * @param failed operations completed with an error
 * @param outstanding operations issued and not yet completed
 * @param fastPath operations the calling thread performed itself under the endpoint's grant
 * @param flushes flushes completed
 * @param strongFences strong fences (remote flushes of lanes) started
 * @param weakFences weak fences (ordering by one lane) applied
 * @param reconfigurations lane-table changes applied
 * @param restarts requests restarted on the current lanes after a reconfiguration
 * @param flushLatency from a flush's acceptance by the endpoint to its completion (flushes that
 *     completed under the grant, without the endpoint, are not in it)
 * @param strongFenceLatency from a strong fence's start to the completion of its lane flushes
 * @param lanes one entry per lane slot
 */
public record EndpointStatistics(String endpoint, long operations, long completed, long failed, long outstanding,
        long fastPath, long flushes, long strongFences, long weakFences, long reconfigurations, long restarts,
        Latency flushLatency, Latency strongFenceLatency, List<LaneStatistics> lanes) {
    /** @return the share of operations that took the fast path, 0 to 1 */
    public double fastPathShare() {
        return operations == 0 ? 0 : (double) fastPath / operations;
    }
}
