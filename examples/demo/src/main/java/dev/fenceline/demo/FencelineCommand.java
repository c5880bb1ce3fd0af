package dev.fenceline.demo;

import picocli.CommandLine;
import picocli.CommandLine.Command;

/** {@code bin/fenceline}: the command-line entry point. */
@Command(name = "fenceline", mixinStandardHelpOptions = true, version = "fenceline 0.1.0",
        description = "One-sided communication runtime for the JVM.",
        subcommands = {DemoCommand.class, ChaosCommand.class, dev.fenceline.perf.PerfCommand.class, DemoTarget.class,
                CommandLine.HelpCommand.class})
public final class FencelineCommand implements Runnable {
    @CommandLine.Spec
    CommandLine.Model.CommandSpec spec;

    @Override
    public void run() {
        spec.commandLine().usage(System.out);
    }

    /**
     * @param args the command line
     */
    public static void main(String[] args) {
        // Initialise SLF4J before the actor system's threads race to do it (avoids its replay warning).
        org.slf4j.LoggerFactory.getILoggerFactory();
        System.exit(new CommandLine(new FencelineCommand()).execute(args));
    }
}
