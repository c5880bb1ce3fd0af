package dev.fenceline.demo;

import picocli.CommandLine;
import picocli.CommandLine.Command;

/** {@code bin/fenceline}: the command-line entry point. */
@Command(name = "fenceline", mixinStandardHelpOptions = true, versionProvider = VersionProvider.class,
        description = "One-sided communication runtime for the JVM.",
        subcommands = {DemoCommand.class, ClusterDemoCommand.class, ChaosCommand.class, dev.fenceline.perf.PerfCommand.class, StatCommand.class,
                DemoTarget.class, CommandLine.HelpCommand.class},
        exitCodeListHeading = "%nExit codes:%n",
        exitCodeList = {"0:done; verified where the command verifies", "1:a violation was found (demo, chaos), or a perf row not measured",
            "2:bad command line (the usage is printed)", "3:nothing to read (stat)",
            "70:crashed (an unexpected error; its stack is printed)"})
public final class FencelineCommand implements Runnable {
    /** A verification found a violation. */
    public static final int VIOLATION = 1;
    /** The command itself failed unexpectedly: not a verdict on what it ran. */
    public static final int CRASHED = 70;

    @CommandLine.Spec
    CommandLine.Model.CommandSpec spec;

    @Override
    public void run() {
        spec.commandLine().usage(spec.commandLine().getOut());
    }

    /**
     * @return the command line, with an unexpected error printed with its stack and mapped to
     *     {@link #CRASHED}, so that a script tells a crash from a violation
     */
    public static CommandLine commandLine() {
        CommandLine cl = new CommandLine(new FencelineCommand());
        cl.setExecutionExceptionHandler((e, cmd, parsed) -> {
            cmd.getErr().println("fenceline " + cmd.getCommandName() + ": crashed: " + e);
            e.printStackTrace(cmd.getErr());
            cmd.getErr().flush();
            return CRASHED;
        });
        return cl;
    }

    /**
     * @param args the command line
     */
    public static void main(String[] args) {
        // Initialise SLF4J before the actor system's threads race to do it (avoids its replay warning).
        org.slf4j.LoggerFactory.getILoggerFactory();
        System.exit(commandLine().execute(args));
    }
}
