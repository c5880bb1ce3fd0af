package dev.fenceline.testkit;

import static org.junit.jupiter.api.Assertions.assertEquals;

import com.typesafe.config.ConfigFactory;
import dev.fenceline.testkit.FaultProgram.Kind;
import dev.fenceline.testkit.FaultProgram.Step;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Bounded exhaustive exploration, beyond random seeds: every interleaving of {@code ops}
 * operations (each a put, an ADD or a fetching ADD), {@code fences} fences and {@code events} lane
 * events (a lane failing, its target stalling past keepalive, the lane replaced or recovered, on
 * either of two lanes) is run on the deterministic simulation, with a little virtual time after
 * each step so that some copies arrive and some answers are still on their way when an event
 * comes, and each run is checked ({@link FaultProgram}). The default bound runs in seconds; the
 * largest that runs in about ten minutes here is {@code -Dfenceline.explore.ops=4
 * -Dfenceline.explore.fences=1 -Dfenceline.explore.events=2} (docs/reconfiguration.md).
 */
@Timeout(value = 3600, unit = TimeUnit.SECONDS)
class ExhaustiveExplorationTest {
    private static final Kind[] OPS = {Kind.PUT, Kind.ADD, Kind.FETCH_ADD};
    private static final Step[] EVENTS = {new Step(Kind.FAIL, 0), new Step(Kind.FAIL, 1), new Step(Kind.STALL, 0),
        new Step(Kind.STALL, 1), new Step(Kind.REPLACE, 0), new Step(Kind.REPLACE, 1), new Step(Kind.RECOVER, 0),
        new Step(Kind.RECOVER, 1)};
    /** A fresh simulation every so many runs, so that memory stays bounded on long explorations. */
    private static final int RUNS_PER_SIMULATION = 20_000;

    /** Every sequence with exactly these numbers of operations, fences and events left to place, one at a time. */
    static void enumerate(List<Step> prefix, int ops, int fences, int events, Consumer<List<Step>> each) {
        if (ops == 0 && fences == 0 && events == 0) {
            List<Step> program = new ArrayList<>(prefix.size() * 2);
            for (Step s : prefix) {
                program.add(s);
                program.add(new Step(Kind.WAIT, 10));
            }
            each.accept(program);
            return;
        }
        if (ops > 0) {
            for (Kind k : OPS) {
                prefix.add(new Step(k, prefix.size() & 3));
                enumerate(prefix, ops - 1, fences, events, each);
                prefix.remove(prefix.size() - 1);
            }
        }
        if (fences > 0) {
            prefix.add(new Step(Kind.FENCE, 0));
            enumerate(prefix, ops, fences - 1, events, each);
            prefix.remove(prefix.size() - 1);
        }
        if (events > 0) {
            for (Step e : EVENTS) {
                prefix.add(e);
                enumerate(prefix, ops, fences, events - 1, each);
                prefix.remove(prefix.size() - 1);
            }
        }
    }

    /** Runs programs on a simulation, starting a fresh one every {@link #RUNS_PER_SIMULATION}. */
    private static final class Explorer implements Consumer<List<Step>>, AutoCloseable {
        private DeterministicSimulation sim;
        private FaultProgram runner;
        private long runs;
        private long violations;
        private final List<String> first = new ArrayList<>();

        @Override
        public void accept(List<Step> program) {
            if (runs % RUNS_PER_SIMULATION == 0) {
                close();
                sim = DeterministicSimulation.start(71 + runs, ConfigFactory.parseString(
                        "fenceline.jmx.enabled = off\nfenceline.transport.sim.direct-access = off\n"
                                + "fenceline.transport.sim.lanes = ["
                                + "{ types = [AM, RMA, AMO], min-delay = 0us, max-delay = 30us },"
                                + "{ types = [AM, RMA, AMO], min-delay = 0us, max-delay = 30us } ]"));
                runner = new FaultProgram(sim);
            }
            runs++;
            String r = runner.run(program);
            if (r != null) {
                violations++;
                if (first.size() < 20) {
                    first.add(r); // the first ones, each with its program
                }
            }
        }

        @Override
        public void close() {
            if (sim != null) {
                sim.close();
                sim = null;
            }
        }
    }

    @Test
    void everyInterleavingHolds() {
        int ops = Integer.getInteger("fenceline.explore.ops", 3);
        int fences = Integer.getInteger("fenceline.explore.fences", 1);
        int events = Integer.getInteger("fenceline.explore.events", 1);
        long start = System.nanoTime();
        try (Explorer explorer = new Explorer()) {
            enumerate(new ArrayList<>(), ops, fences, events, explorer);
            System.out.printf("exhaustive exploration: %d operations, %d fences, %d lane events over 2 lanes: %d"
                    + " interleavings in %d s, %d violations%n", ops, fences, events, explorer.runs,
                    TimeUnit.NANOSECONDS.toSeconds(System.nanoTime() - start), explorer.violations);
            assertEquals(List.of(), explorer.first);
        }
    }
}
