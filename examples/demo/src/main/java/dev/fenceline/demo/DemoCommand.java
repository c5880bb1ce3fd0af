package dev.fenceline.demo;

import com.typesafe.config.Config;
import com.typesafe.config.ConfigFactory;
import dev.fenceline.Fenceline;
import java.io.PrintStream;
import java.util.concurrent.Callable;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

/** {@code fenceline demo}: a verified workload between two workers in one JVM. */
@Command(name = "demo", mixinStandardHelpOptions = true,
        description = "Runs puts, gets, atomics and active messages with fences and flushes between two workers"
                + " in one JVM, verifies every target byte, counter and fetched value, and prints a report."
                + " Exits 1 if anything fails to verify.")
public final class DemoCommand implements Callable<Integer> {
    @Spec
    CommandSpec spec;

    @Option(names = "--ops", defaultValue = "20000", description = "Operations to issue (default ${DEFAULT-VALUE}).")
    int ops;

    @Option(names = "--seed", defaultValue = "1", description = "Seed of the workload (default ${DEFAULT-VALUE}).")
    long seed;

    @Option(names = "--region", defaultValue = "1048576",
            description = "Bytes of target memory (default ${DEFAULT-VALUE}).")
    int regionBytes;

    @Option(names = "--window", defaultValue = "256",
            description = "Operations in flight at most (default ${DEFAULT-VALUE}).")
    int window;

    @Option(names = "--fence-mode", description = "weak, strong or endpoint (default: from configuration).")
    String fenceMode;

    @Option(names = "--no-faults", description = "Do not fail, recover and replace lanes during the run (sim).")
    boolean noFaults;

    @Option(names = "--transport", defaultValue = "sim", description = "sim (in-process, with injected lane"
            + " failures, recoveries and replacements) or tcp (two rails over loopback: 127.0.0.1 and 127.0.0.2)."
            + " Default ${DEFAULT-VALUE}.")
    String transport;

    @Override
    public Integer call() throws Exception {
        Config config = switch (transport) {
            case "sim" -> ConfigFactory.load();
            case "tcp" -> tcp(ConfigFactory.load());
            default -> throw new CommandLine.ParameterException(spec.commandLine(), "--transport " + transport
                    + ": expected sim or tcp");
        };
        if (fenceMode != null) {
            config = ConfigFactory.parseString("fenceline.fence.mode = \"" + fenceMode + "\"").withFallback(config);
        }
        PrintStream out = System.out;
        try (Fenceline fenceline = Fenceline.create(config)) {
            boolean faults = !noFaults && fenceline.transports().contains("sim");
            DemoReport report = Demo.run(fenceline, ops, seed, regionBytes, window, true, faults);
            report.print(out);
            return report.ok() ? 0 : 1;
        }
    }

    /**
     * Both workers live in this JVM, so they share a secret made up for this run, unless the
     * environment (FENCELINE_TCP_SECRET) or the configuration supplies one.
     */
    private static Config tcp(Config base) {
        String secret = base.getString("fenceline.transport.tcp.secret");
        if (secret.isEmpty()) {
            byte[] random = new byte[24];
            new java.security.SecureRandom().nextBytes(random);
            secret = java.util.HexFormat.of().formatHex(random);
        }
        return ConfigFactory.parseString("fenceline.transports = [tcp]\n"
                + "fenceline.transport.tcp.listen = [\"127.0.0.1:0\", \"127.0.0.2:0\"]\n"
                + "fenceline.transport.tcp.secret = \"" + secret + "\"").withFallback(base);
    }
}
