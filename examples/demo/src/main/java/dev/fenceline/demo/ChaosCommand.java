package dev.fenceline.demo;

import dev.fenceline.testkit.ChaosRun;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

/** {@code fenceline chaos}: one chaos case, as the chaos test runs it, to run a seed's case again. */
@Command(name = "chaos", mixinStandardHelpOptions = true,
        description = "Runs model-checked workloads on several endpoints while lanes fail, are replaced, recover"
                + " and are added; checks fences, flushes, exactly-once and final memory. Exits 1 on a violation, 70 if it crashed.")
public final class ChaosCommand implements Callable<Integer> {
    @Option(names = "--seed", required = true, description = "The case's seed.")
    long seed;

    @Option(names = "--ops", defaultValue = "800", description = "Operations over all endpoints (default ${DEFAULT-VALUE}).")
    int ops;

    @Option(names = "--reconfigs", defaultValue = "12", description = "Lane changes to inject (default ${DEFAULT-VALUE}).")
    int reconfigs;

    @Option(names = "--endpoints", defaultValue = "2", description = "Endpoints (default ${DEFAULT-VALUE}).")
    int endpoints;

    @Option(names = "--fence-mode", defaultValue = "endpoint", description = "endpoint or strong (default ${DEFAULT-VALUE}).")
    String fenceMode;

    @Option(names = "--json", description = "Print the report as one JSON object.")
    boolean json;

    @Spec
    CommandSpec spec;

    @Override
    public Integer call() throws Exception {
        ChaosRun.Options options;
        try {
            options = new ChaosRun.Options(seed, ops, reconfigs, endpoints, fenceMode);
        } catch (IllegalArgumentException e) { // the option and its bound, as the run states them
            throw new picocli.CommandLine.ParameterException(spec.commandLine(), e.getMessage());
        }
        ChaosRun.Report r = ChaosRun.run(options);
        if (json) {
            System.out.println(r.toJson());
        } else {
            var s = r.stats();
            System.out.printf("chaos seed %d: %d ops on %d endpoints, fence mode %s%n", seed, ops, endpoints, fenceMode);
            System.out.printf("  injected    %d failures (%d of stalled targets), %d replacements, %d recoveries,"
                    + " %d additions%n", r.failures(), r.stalls(), r.replacements(), r.recoveries(), r.additions());
            System.out.printf("  endpoint    %d reconfigurations, %d restarts, %d strong and %d weak fences%n",
                    s.reconfigurations(), s.restarts(), s.strongFences(), s.weakFences());
            System.out.printf("  requests    %d issued, %d completed, %d failed, %d outstanding%n", s.operations(),
                    s.completed(), s.failed(), s.outstanding());
            r.errors().stream().limit(10).forEach(e -> System.out.println("  violation   " + e));
            System.out.printf("  time        %d ms%n", r.elapsed().toMillis());
            System.out.println(r.ok() ? "RESULT: OK" : "RESULT: FAILED - run the case again with " + r.reproduce());
        }
        return r.ok() ? 0 : FencelineCommand.VIOLATION;
    }
}
