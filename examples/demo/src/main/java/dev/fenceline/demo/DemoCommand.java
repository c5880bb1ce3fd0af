package dev.fenceline.demo;

import com.typesafe.config.Config;
import com.typesafe.config.ConfigFactory;
import dev.fenceline.Fenceline;
import java.io.PrintStream;
import java.util.List;
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
            + " failures, recoveries and replacements), tcp (two rails over loopback: 127.0.0.1 and 127.0.0.2),"
            + " shm (shared memory in /dev/shm) or ucx (UCX's UCT: posix shared memory and cma, where UCX is"
            + " installed). Default ${DEFAULT-VALUE}.")
    String transport;

    @Option(names = "--processes", defaultValue = "1", description = "1: both workers in this JVM; 2: the"
            + " target worker in a second JVM on this host (tcp or shm). Default ${DEFAULT-VALUE}.")
    int processes;

    @Override
    public Integer call() throws Exception {
        bound("--ops", ops, 1, Integer.MAX_VALUE);
        bound("--window", window, 1, 1 << 20);
        bound("--region", regionBytes, 64, Integer.MAX_VALUE);
        if (fenceMode != null && !List.of("weak", "strong", "endpoint").contains(fenceMode)) {
            throw new CommandLine.ParameterException(spec.commandLine(), "--fence-mode " + fenceMode
                    + ": expected weak, strong or endpoint");
        }
        if (!List.of("sim", "tcp", "shm", "ucx").contains(transport)) {
            throw new CommandLine.ParameterException(spec.commandLine(), "--transport " + transport
                    + ": expected sim, tcp, shm or ucx");
        }
        if (processes != 1 && (processes != 2 || transport.equals("sim"))) {
            throw new CommandLine.ParameterException(spec.commandLine(), "--processes " + processes + " with "
                    + transport + ": expected 1, or 2 with tcp, shm or ucx (sim lives in one JVM)");
        }
        String secret = transport.equals("tcp") ? secret(ConfigFactory.load()) : null;
        Config config = config(transport, secret, processes == 2);
        if (fenceMode != null) {
            config = ConfigFactory.parseString("fenceline.fence.mode = \"" + fenceMode + "\"").withFallback(config);
        }
        if (processes == 2) {
            return twoProcesses(config, secret);
        }
        PrintStream out = System.out;
        try (Fenceline fenceline = Fenceline.create(config)) {
            boolean faults = !noFaults && fenceline.transports().contains("sim");
            DemoReport report = Demo.run(fenceline, ops, seed, regionBytes, window, true, faults);
            report.print(out);
            return report.ok() ? 0 : FencelineCommand.VIOLATION;
        }
    }

    private void bound(String option, long value, long least, long most) {
        if (value < least || value > most) {
            throw new CommandLine.ParameterException(spec.commandLine(), option + " " + value + ": expected " + least
                    + " to " + most);
        }
    }

    /**
     * The demo's workers are this JVM and, with --processes 2, its child, so they share a secret made
     * up for this run, unless the environment (FENCELINE_TCP_SECRET) or the configuration supplies one.
     */
    private static String secret(Config base) {
        String secret = base.getString("fenceline.transport.tcp.secret");
        if (secret.isEmpty()) {
            byte[] random = new byte[24];
            new java.security.SecureRandom().nextBytes(random);
            secret = java.util.HexFormat.of().formatHex(random);
        }
        return secret;
    }

    /** The configuration of one demo process on {@code transport}. */
    static Config config(String transport, String secret, boolean separateProcesses) {
        Config base = ConfigFactory.load();
        return switch (transport) {
            case "tcp" -> ConfigFactory.parseString("fenceline.transports = [tcp]\n"
                    + "fenceline.transport.tcp.listen = [\"127.0.0.1:0\", \"127.0.0.2:0\"]"
                    + (secret == null ? "" : "\nfenceline.transport.tcp.secret = \"" + secret + "\""))
                    .withFallback(base);
            case "shm" -> ConfigFactory.parseString("fenceline.transports = [shm]").withFallback(base);
            case "ucx" -> ConfigFactory.parseString("fenceline.transports = [ucx]\n"
                    + "fenceline.transport.ucx.tls = [posix, cma]").withFallback(base);
            default -> ConfigFactory.parseString("fenceline.transports = [sim]").withFallback(base);
        };
    }

    /** Forks the target process, runs the workload against it, and checks its memory's digest. */
    private int twoProcesses(Config config, String secret) throws Exception {
        PrintStream out = System.out;
        java.util.List<String> cmd = new java.util.ArrayList<>(java.util.List.of(
                java.nio.file.Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                "--add-exports", "java.base/jdk.internal.misc=ALL-UNNAMED", "-cp",
                System.getProperty("java.class.path"), FencelineCommand.class.getName(), "demo-target",
                "--transport", transport, "--region", Integer.toString(regionBytes)));
        ProcessBuilder pb = new ProcessBuilder(cmd).redirectError(ProcessBuilder.Redirect.INHERIT);
        if (secret != null) {
            pb.environment().put("FENCELINE_TCP_SECRET", secret); // never on a command line
        }
        Process target = pb.start();
        try (java.io.BufferedReader in = new java.io.BufferedReader(new java.io.InputStreamReader(
                target.getInputStream(), java.nio.charset.StandardCharsets.UTF_8));
                Fenceline fenceline = Fenceline.create(config)) {
            String line;
            while ((line = in.readLine()) != null && !line.startsWith("ADDRESS ")) {
                out.println("target: " + line);
            }
            if (line == null) {
                out.println("RESULT: FAILED - the target process did not start");
                return FencelineCommand.CRASHED;
            }
            String[] a = line.split(" ");
            java.util.HexFormat hex = java.util.HexFormat.of();
            DemoReport report = Demo.runAgainst(fenceline, dev.fenceline.WorkerAddress.fromBytes(hex.parseHex(a[1])),
                    hex.parseHex(a[2]), hex.parseHex(a[3]), ops, seed, window, target.pid(), in);
            report.print(out);
            return report.ok() ? 0 : FencelineCommand.VIOLATION;
        } finally {
            target.getOutputStream().close();
            if (!target.waitFor(20, java.util.concurrent.TimeUnit.SECONDS)) {
                target.destroyForcibly();
            }
        }
    }
}
