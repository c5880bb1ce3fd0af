package dev.fenceline.demo;

import dev.fenceline.examples.cluster.ClusterDemo;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/** {@code fenceline cluster-demo}: the replicated key-value store on a Pekko Cluster of separate JVMs. */
@Command(name = "cluster-demo", mixinStandardHelpOptions = true,
        description = {"Starts the members of a replicated key-value store (examples/cluster) as separate JVMs, each a"
                + " Pekko Cluster member with a Fenceline worker whose region holds every key; runs their writes (put,"
                + " fence, ADD, fence to every replica), kills the last member with SIGKILL a third of the way"
                + " through, lets the split-brain resolver down it, and has the survivors read every replica that is"
                + " left with RMA gets: nothing lost, nothing applied twice, every request to the dead member ended"
                + " with EndpointFailed or OutcomeUnknown. Exits 1 on a violation, 70 if it crashed."})
public final class ClusterDemoCommand implements Callable<Integer> {
    @picocli.CommandLine.Spec
    picocli.CommandLine.Model.CommandSpec spec;

    @Option(names = "--nodes", defaultValue = "3", description = "Members, 3 to 16 (default ${DEFAULT-VALUE}).")
    int nodes;

    @Option(names = "--keys", defaultValue = "8", description = "Keys each member writes (default ${DEFAULT-VALUE}).")
    int keys;

    @Option(names = "--writes", defaultValue = "20000",
            description = "Writes each member issues, each to every replica (default ${DEFAULT-VALUE}).")
    int writes;

    @Option(names = "--netns", description = "Each member in a network namespace of its own, joined by two veth rails"
            + " (needs root and iproute2).")
    boolean netns;

    @Option(names = "--config", description = "The members' configuration (default: config/cluster/three-nodes.conf"
            + " of this checkout).")
    Path config;

    @Option(names = "--logs", description = "Where the members' logs go (default: fenceline-cluster-demo-<pid> in the temporary directory).")
    Path logs;

    @Override
    public Integer call() throws Exception {
        Path conf = config != null ? config
                : Path.of(System.getProperty("dev.fenceline.home", "."), "config", "cluster", "three-nodes.conf");
        Path logDir = logs != null ? logs : Path.of(System.getProperty("java.io.tmpdir"),
                "fenceline-cluster-demo-" + ProcessHandle.current().pid());
        ClusterDemo.Options options;
        try {
            options = new ClusterDemo.Options(nodes, keys, writes, conf, netns, logDir, System.out);
        } catch (IllegalArgumentException e) {
            throw new picocli.CommandLine.ParameterException(spec.commandLine(), e.getMessage());
        }
        if (!Files.isRegularFile(conf)) {
            throw new picocli.CommandLine.ParameterException(spec.commandLine(),
                    "no configuration at " + conf + " (pass --config FILE)");
        }
        System.out.printf("cluster demo: %d members%s, %d keys each, %d writes each to every replica; logs in %s%n",
                nodes, netns ? " in network namespaces (two rails)" : " on loopback", keys, writes, logDir);
        long start = System.nanoTime();
        ClusterDemo.Report r = ClusterDemo.run(options);
        System.out.printf("  survivors checked %d replica slots; %d s in all%n", r.checkedSlots(),
                (System.nanoTime() - start) / 1_000_000_000L);
        r.problems().stream().limit(10).forEach(p -> System.out.println("  violation   " + p));
        System.out.println(r.ok() ? "RESULT: OK" : "RESULT: FAILED");
        return r.ok() ? 0 : FencelineCommand.VIOLATION;
    }
}
