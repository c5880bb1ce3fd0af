package dev.fenceline.demo;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.fenceline.Fenceline;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

@Timeout(value = 120, unit = TimeUnit.SECONDS)
class DemoTest {
    @ParameterizedTest(name = "mode {0}, seed {1}")
    @CsvSource({"endpoint, 7", "endpoint, 8", "strong, 7", "strong, 9"})
    void demoVerifiesEverything(String mode, long seed) throws Exception {
        System.out.println("demo workload: mode " + mode + ", seed " + seed);
        try (Fenceline f = Fenceline.create(com.typesafe.config.ConfigFactory.parseString(
                "fenceline.transports = [sim]\nfenceline.fence.mode = " + mode))) {
            DemoReport report = Demo.run(f, 3000, seed, 256 * 1024, 64, true, true);
            var r = report.result();
            assertEquals(java.util.List.of(), r.errors());
            assertTrue(r.puts() > 0 && r.gets() > 0 && r.atomics() > 0 && r.messages() > 0, r.toString());
            assertTrue(r.verifiedBytes() >= 256 * 1024);
            assertTrue(report.ok());
            assertEquals(0, report.stats().outstanding());
            assertTrue(report.stats().reconfigurations() >= 1, "faults were injected: " + report.faults());
            assertEquals(0, report.stats().failed());
            ByteArrayOutputStream out = new ByteArrayOutputStream();
            report.print(new PrintStream(out, true, StandardCharsets.UTF_8));
            assertTrue(out.toString(StandardCharsets.UTF_8).contains("RESULT: OK"), out.toString(StandardCharsets.UTF_8));
        }
    }

    /** The README's demo over the real TCP transport: two loopback rails, everything verified. */
    @Test
    void demoRunsOverTcp() {
        PrintStream saved = System.out;
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        int code;
        try {
            System.setOut(new PrintStream(out, true, StandardCharsets.UTF_8));
            code = new picocli.CommandLine(new DemoCommand()).execute("--transport", "tcp", "--ops", "3000",
                    "--region", "262144");
        } finally {
            System.setOut(saved);
        }
        String report = out.toString(StandardCharsets.UTF_8);
        assertEquals(0, code, report);
        assertTrue(report.contains("RESULT: OK") && report.contains("tcp"), report);
    }

    /** The acceptance line: the demo across two processes over shared memory. */
    @Test
    void demoRunsAcrossTwoProcessesOverShm() {
        PrintStream saved = System.out;
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        int code;
        try {
            System.setOut(new PrintStream(out, true, StandardCharsets.UTF_8));
            code = new picocli.CommandLine(new DemoCommand()).execute("--transport", "shm", "--processes", "2",
                    "--ops", "3000", "--region", "262144");
        } finally {
            System.setOut(saved);
        }
        String report = out.toString(StandardCharsets.UTF_8);
        assertEquals(0, code, report);
        assertTrue(report.contains("in two processes") && report.contains("RESULT: OK"), report);
    }

    @Test
    void anUnknownTransportIsAUsageError() {
        java.io.StringWriter err = new java.io.StringWriter();
        picocli.CommandLine cl = new picocli.CommandLine(new DemoCommand());
        cl.setErr(new java.io.PrintWriter(err));
        assertEquals(2, cl.execute("--transport", "carrier-pigeon"));
        assertTrue(err.toString().contains("--transport carrier-pigeon: expected sim, tcp, shm or ucx"), err.toString());
    }

    @Test
    void demoDetectsAMissingFence() throws Exception {
        // The check must be able to fail: a workload that skips fences (window > 1 so operations overlap
        // in flight) on reordering lanes has to produce verification errors.
        try (Fenceline f = Fenceline.create(com.typesafe.config.ConfigFactory.parseString(
                "fenceline.transports = [sim]"))) {
            DemoReport r = Demo.run(f, 4000, 11, 256 * 1024, 256, false);
            assertTrue(!r.result().errors().isEmpty(), "without fences the model must diverge: " + r.result());
            assertTrue(!r.ok());
        }
    }

    @Test
    void readmeExampleIsTheCompiledQuickStart() throws Exception {
        Path root = Path.of(System.getProperty("fencelineTestConfigDir")).getParent();
        String readme = Files.readString(root.resolve("README.md"));
        String source = Files.readString(root.resolve("examples/demo/src/main/java/dev/fenceline/demo/QuickStart.java"));
        String body = source.substring(source.indexOf("// README-BEGIN") + "// README-BEGIN".length(),
                source.indexOf("// README-END"));
        String normalized = body.lines().map(String::strip).filter(l -> !l.isEmpty())
                .reduce("", (x, y) -> x + y + "\n");
        String readmeNormalized = readme.lines().map(String::strip).filter(l -> !l.isEmpty())
                .reduce("", (x, y) -> x + y + "\n");
        assertTrue(readmeNormalized.contains(normalized), "README's example must be QuickStart's body:\n" + normalized);
        PrintStream old = System.out;
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        System.setOut(new PrintStream(out, true, StandardCharsets.UTF_8));
        try {
            QuickStart.main(new String[0]);
        } finally {
            System.setOut(old);
        }
        assertEquals("42 h", out.toString(StandardCharsets.UTF_8).strip());
    }
}
