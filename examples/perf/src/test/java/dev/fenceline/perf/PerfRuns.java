package dev.fenceline.perf;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import picocli.CommandLine;

/** Runs the perf command in this JVM for a test, which must succeed, and returns what it printed. */
final class PerfRuns {
    private PerfRuns() {
    }

    static String run(String... args) {
        PrintStream saved = System.out;
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        try {
            System.setOut(new PrintStream(out, true, StandardCharsets.UTF_8));
            assertEquals(0, new CommandLine(new PerfCommand()).execute(args));
        } finally {
            System.setOut(saved); // restored even when the run failed
        }
        return out.toString(StandardCharsets.UTF_8);
    }
}
