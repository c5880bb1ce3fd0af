package dev.fenceline.testkit;

import static org.junit.jupiter.api.Assertions.assertEquals;

import dev.fenceline.EndpointStatistics;
import dev.fenceline.WorkerStatistics;
import java.util.List;

/** The worker's running totals, counted on every path beside its endpoints' own counters, agree with them. */
final class WorkerTotalsAssert {
    private WorkerTotalsAssert() {
    }

    /**
     * @param worker a worker's statistics, read when nothing of it runs
     * @param only its one endpoint's, read then too
     */
    static void assertCountsItsOnlyEndpoint(WorkerStatistics worker, EndpointStatistics only) {
        assertEquals(List.of(only.operations(), only.completed(), only.failed(), only.outstanding(), only.fastPath(),
                only.flushes(), only.strongFences(), only.weakFences(), only.reconfigurations(), only.restarts()),
                List.of(worker.operations(), worker.completed(), worker.failed(), worker.outstanding(), worker.direct(),
                worker.flushes(), worker.strongFences(), worker.weakFences(), worker.reconfigurations(),
                worker.restarts()),
                "the worker's totals against its one endpoint's: " + worker + " / " + only);
    }
}
