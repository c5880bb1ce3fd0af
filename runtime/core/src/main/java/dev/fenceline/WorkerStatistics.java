package dev.fenceline;

/**
 * Counters of a worker, summed over its endpoints. Monotonic except {@code outstanding}.
 *
 * @param endpoints endpoints ever created
 * @param operations operations issued (RMA, atomics, active messages)
 * @param completed operations completed successfully
 * @param failed operations completed with an error
 * @param flushes endpoint flushes completed
 * @param strongFences strong fences (remote flush of lanes) started
 * @param weakFences weak fences (ordering by one lane) applied
 * @param fastForwards fences that needed no work because nothing preceded them
 * @param fenceQueued requests that waited in a fence queue
 * @param maxFenceQueueDepth the deepest any fence queue has been
 * @param reconfigurations lane table changes applied (failovers, replacements, recoveries, additions)
 * @param restarts requests restarted on the current lanes after a reconfiguration
 * @param outstanding operations issued and not yet completed
 * @param direct operations the calling thread performed itself on a lane that can act directly,
 *     while nothing else of its endpoint was outstanding (the fast path by grant; counted in
 *     {@code operations} and {@code completed} too)
 * @param openEndpoints endpoints open now (a closed endpoint is forgotten; its counts stay in the others)
 */
public record WorkerStatistics(long endpoints, long operations, long completed, long failed, long flushes,
        long strongFences, long weakFences, long fastForwards, long fenceQueued, long maxFenceQueueDepth,
        long reconfigurations, long restarts, long outstanding, long direct, long openEndpoints) {
}
