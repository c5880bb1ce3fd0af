package dev.fenceline.demo;

import dev.fenceline.LaneInfo;
import dev.fenceline.WorkerStatistics;
import dev.fenceline.testkit.ModelCheckedWorkload;
import java.io.PrintStream;
import java.util.List;

/**
 * What the demo did and verified.
 *
 * @param transports the enabled transports
 * @param fenceMode the fence mode
 * @param lanes the endpoint's lanes
 * @param result the workload's counts and errors
 * @param stats the origin worker's counters
 * @param faults the lane changes injected while the workload ran
 * @param where where the two workers ran
 */
record DemoReport(List<String> transports, String fenceMode, List<LaneInfo> lanes, ModelCheckedWorkload.Result result,
        WorkerStatistics stats, List<String> faults, String where) {

    boolean ok() {
        return result.ok() && stats.failed() == 0 && stats.outstanding() == 0;
    }

    void print(PrintStream out) {
        ModelCheckedWorkload.Result r = result;
        out.printf("Fenceline demo: two workers %s over %s, fence mode %s%n", where, transports, fenceMode);
        for (LaneInfo l : lanes) {
            out.printf("  lane %d      %s %s%n", l.index(), l.transport(), l.types());
        }
        out.printf("  operations  %d (puts %d, gets %d, atomics %d, active messages %d), fences %d, flushes %d%n",
                r.operations(), r.puts(), r.gets(), r.atomics(), r.messages(), r.fences(), r.flushes());
        out.printf("  verified    %d target bytes; %d checks passed (fetched values, reads, memory, messages)%n",
                r.verifiedBytes(), r.checks());
        out.printf("  fence work  strong %d, weak %d, fast-forward %d, queued %d (max depth %d)%n",
                stats.strongFences(), stats.weakFences(), stats.fastForwards(), stats.fenceQueued(),
                stats.maxFenceQueueDepth());
        out.printf("  failover    %s; %d reconfigurations, %d requests restarted%n",
                faults.isEmpty() ? "no lane changes injected" : String.join(", ", faults), stats.reconfigurations(),
                stats.restarts());
        out.printf("  completed   %d ok, %d failed, %d outstanding%n", stats.completed(), stats.failed(),
                stats.outstanding());
        out.printf("  errors      %d%n", r.errors().size());
        for (String e : r.errors().subList(0, Math.min(r.errors().size(), 10))) {
            out.printf("    %s%n", e);
        }
        double secs = r.elapsed().toNanos() / 1e9;
        out.printf("  time        %.2f s (%.0f ops/s)%n", secs, r.operations() / Math.max(secs, 1e-9));
        out.println(ok() ? "RESULT: OK - every target byte, counter, fetched value and message verified"
                : "RESULT: FAILED - " + r.errors().size() + " verification errors");
    }
}
