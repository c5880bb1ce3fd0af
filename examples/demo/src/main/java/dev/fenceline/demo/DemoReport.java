package dev.fenceline.demo;

import dev.fenceline.LaneInfo;
import dev.fenceline.WorkerStatistics;
import java.io.PrintStream;
import java.time.Duration;
import java.util.List;

/**
 * What the demo did and verified.
 *
 * @param transports the enabled transports
 * @param fenceMode the fence mode
 * @param lanes the endpoint's lanes
 * @param puts puts issued
 * @param gets gets issued
 * @param atomics atomics issued
 * @param messages active messages sent
 * @param fences fences issued by the workload
 * @param flushes flushes awaited by the workload
 * @param verifiedBytes target bytes compared with the model
 * @param verifiedResults fetched values and get contents compared with the model
 * @param errors what failed to verify or completed with an error (empty when all is well)
 * @param stats the origin worker's counters
 * @param elapsed wall time of the workload
 */
record DemoReport(List<String> transports, String fenceMode, List<LaneInfo> lanes, long puts, long gets, long atomics,
        long messages, long fences, long flushes, long verifiedBytes, long verifiedResults, List<String> errors,
        WorkerStatistics stats, Duration elapsed) {

    boolean ok() {
        return errors.isEmpty();
    }

    void print(PrintStream out) {
        long total = puts + gets + atomics + messages;
        out.printf("Fenceline demo: two workers in one JVM over %s, fence mode %s%n", transports, fenceMode);
        for (LaneInfo l : lanes) {
            out.printf("  lane %d      %s %s%n", l.index(), l.transport(), l.types());
        }
        out.printf("  operations  %d (puts %d, gets %d, atomics %d, active messages %d), fences %d, flushes %d%n",
                total, puts, gets, atomics, messages, fences, flushes);
        out.printf("  verified    %d target bytes; %d checks passed (fetched values, reads, memory, messages)%n", verifiedBytes, verifiedResults);
        out.printf("  fence work  strong %d, weak %d, fast-forward %d, queued %d (max depth %d)%n",
                stats.strongFences(), stats.weakFences(), stats.fastForwards(), stats.fenceQueued(),
                stats.maxFenceQueueDepth());
        out.printf("  completed   %d ok, %d failed, %d outstanding%n", stats.completed(), stats.failed(),
                stats.outstanding());
        out.printf("  errors      %d%n", errors.size());
        for (String e : errors.subList(0, Math.min(errors.size(), 10))) {
            out.printf("    %s%n", e);
        }
        double secs = elapsed.toNanos() / 1e9;
        out.printf("  time        %.2f s (%.0f ops/s)%n", secs, total / Math.max(secs, 1e-9));
        out.println(ok() ? "RESULT: OK - every target byte, counter, fetched value and message verified"
                : "RESULT: FAILED - " + errors.size() + " verification errors");
    }
}
