package dev.fenceline.demo;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.typesafe.config.ConfigFactory;
import dev.fenceline.Endpoint;
import dev.fenceline.Fenceline;
import dev.fenceline.MemoryRegion;
import dev.fenceline.Worker;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import picocli.CommandLine;

/** What a script sees of bin/fenceline: its version, its usage errors, its exit codes, and stat. */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class CommandLineTest {
    private final StringWriter out = new StringWriter();
    private final StringWriter err = new StringWriter();

    private int run(String... args) {
        CommandLine cl = FencelineCommand.commandLine();
        cl.setOut(new PrintWriter(out, true));
        cl.setErr(new PrintWriter(err, true));
        return cl.execute(args);
    }

    @Test
    void theVersionIsTheBuildsVersion() {
        assertEquals(0, run("--version"));
        String v = Fenceline.version();
        assertTrue(v.matches("\\d+\\.\\d+\\.\\d+(-SNAPSHOT)?"), "version as built: " + v);
        assertTrue(out.toString().startsWith("fenceline " + v), out.toString());
    }

    /** This class path has shm and tcp too, so chaos must ask for sim by name, not by `auto`. */
    @Test
    void chaosRunsOnTheSimTransportWhateverElseIsOnTheClassPath() {
        assertEquals(0, run("chaos", "--seed", "7", "--ops", "200", "--reconfigs", "4"), err.toString());
    }

    @Test
    void theClusterDemoIsACommand() {
        assertEquals(2, run("cluster-demo", "--nodes", "2"), "fewer than three members cannot lose one");
        assertTrue(err.toString().contains("--nodes 2"), err.toString());
    }

    @Test
    void aBadSizeIsAUsageErrorNotAStackTrace() {
        assertEquals(2, run("perf", "-t", "put_lat", "-s", "8,12Q"));
        assertTrue(err.toString().contains("'12Q' is not a size"), err.toString());
        assertTrue(err.toString().contains("Usage: fenceline perf"), "the usage follows: " + err);
        assertTrue(!err.toString().contains("\tat "), "no stack trace: " + err);
        assertEquals(2, run("perf", "-s", "65M"));
        assertTrue(err.toString().contains("size '65M' is outside 1 byte to 64 MiB"), err.toString());
    }

    /**
     * A run that would check nothing, or options out of their bounds, are usage errors naming the
     * option and its bound, never a pass (exit 0) nor a crash (70).
     */
    @Test
    void optionsOutOfTheirBoundsAreUsageErrors() {
        String[][] cases = {
            {"demo --ops 0", "--ops 0: expected 1 to"},
            {"demo --window 0", "--window 0: expected 1 to 1048576"},
            {"demo --region 8", "--region 8: expected 64 to"},
            {"demo --fence-mode bogus", "--fence-mode bogus: expected weak, strong or endpoint"},
            {"chaos --endpoints 0", "endpoints"},
            {"stat --count -1", "--count -1: expected 0"},
        };
        for (String[] c : cases) {
            int before = err.getBuffer().length();
            assertEquals(2, run(c[0].split(" ")), c[0] + ": " + err);
            String said = err.toString().substring(before);
            assertTrue(said.contains(c[1]), c[0] + " said: " + said);
            assertTrue(!said.contains("\tat "), "no stack trace: " + said);
        }
    }

    @Test
    void aCrashIsNotAViolation() {
        // Nothing listens on port 1 of loopback: the driver cannot reach its server, which is a crash.
        int code = run("perf", "-x", "shm", "--connect", "127.0.0.1:1", "-t", "put_bw", "-s", "8", "-n", "10", "--no-progress");
        assertEquals(FencelineCommand.CRASHED, code, err.toString());
        assertTrue(err.toString().contains("fenceline perf: crashed:"), err.toString());
        assertTrue(FencelineCommand.CRASHED != FencelineCommand.VIOLATION);
        assertTrue(run("--help") == 0 && out.toString().contains("70   crashed"), out.toString());
    }

    /** A worker row with 1,234 operations, all done, none failed or outstanding. */
    private static final String WORKER_DONE = "\\s+stat-a\\s+1,234\\s+1,234\\s+0\\s+0\\s+.*";
    /** An endpoint row with 1,234 operations, none outstanding or failed, two live lanes. */
    private static final String ENDPOINT_DONE = "\\s+stat-a->stat-b#1\\s+1,234\\s+0\\s+0\\s+[\\d,]+\\s+2\\s+[\\d,]+";

    /** @return the first line of a stat screen whose text starts with {@code start}, or "" */
    private static String row(String screen, String start) {
        return screen.lines().filter(l -> l.trim().startsWith(start)).findFirst().orElse("");
    }

    @Test
    void statShowsARunningRuntimesWorkersAndEndpoints(@TempDir Path dir) throws Exception {
        assertEquals(StatCommand.NOTHING_TO_READ, run("stat", "--dir", dir.toString(), "--once"));
        assertTrue(err.toString().contains("no running Fenceline process publishes counters in " + dir), err.toString());
        try (Fenceline f = Fenceline.create(ConfigFactory.parseString("fenceline.transports = [sim]\n"
                + "fenceline.stat.directory = \"" + dir + "\"\nfenceline.stat.interval = 20ms"))) {
            Worker a = f.newWorker("stat-a").toCompletableFuture().get(10, TimeUnit.SECONDS);
            Worker b = f.newWorker("stat-b").toCompletableFuture().get(10, TimeUnit.SECONDS);
            MemoryRegion region = b.allocate(4096);
            Endpoint ep = a.connect(b.address()).toCompletableFuture().get(10, TimeUnit.SECONDS);
            for (int i = 0; i < 1234; i++) {
                ep.put(ByteBuffer.allocate(8), region.address(), region.remoteKey());
            }
            ep.flush().toCompletableFuture().get(10, TimeUnit.SECONDS);
            String screen = "";
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
            // The counters are published every 20 ms: a snapshot taken before the flush completed
            // shows the puts issued and not all done yet; a later one shows the final state.
            while (!(row(screen, "stat-a ").matches(WORKER_DONE)
                    && row(screen, "stat-a->stat-b#1 ").matches(ENDPOINT_DONE) && screen.contains(" stat-b "))) {
                assertTrue(deadline - System.nanoTime() > 0, "stat never showed the puts done (worker: ops done failed"
                        + " outst; endpoint: ops outst failed bytes live-lanes flush-p99): " + screen);
                out.getBuffer().setLength(0);
                assertEquals(0, run("stat", "--dir", dir.toString(), "--once"), err.toString());
                screen = out.toString();
            }
            assertTrue(screen.contains("pid " + ProcessHandle.current().pid()), screen);
            // A second file of this process whose header its writer broke: shown as unreadable, the
            // other still read, no crash.
            Path real;
            try (var files = Files.list(dir)) {
                real = files.findFirst().orElseThrow();
            }
            Path broken = dir.resolve(ProcessHandle.current().pid() + "-999" + dev.fenceline.internal.StatLayout.SUFFIX);
            Files.copy(real, broken);
            try (java.nio.channels.FileChannel ch = java.nio.channels.FileChannel.open(broken,
                    java.nio.file.StandardOpenOption.WRITE)) {
                ch.write(java.nio.ByteBuffer.allocate(8).order(java.nio.ByteOrder.nativeOrder())
                        .putLong(0, Long.MIN_VALUE), dev.fenceline.internal.StatLayout.UPDATED_OFFSET);
            }
            out.getBuffer().setLength(0);
            assertEquals(0, run("stat", "--dir", dir.toString(), "--once"), err.toString());
            assertTrue(out.toString().contains("stat-a"), "the good file is read: " + out);
            assertTrue(out.toString().contains("updated at an invalid time (" + Long.MIN_VALUE + " ms)"),
                    "the broken one says so: " + out);
            Files.delete(broken);
            out.getBuffer().setLength(0);
            assertEquals(0, run("stat", Long.toString(ProcessHandle.current().pid()), "--dir", dir.toString(),
                    "--count", "2", "--interval", "10ms"));
            assertEquals(2, out.toString().split("pid " + ProcessHandle.current().pid(), -1).length - 1,
                    "two refreshes: " + out);
        }
        try (var files = Files.list(dir)) {
            assertEquals(0, files.count(), "the runtime's counters file goes with it");
        }
        assertEquals(2, run("stat", "--interval", "soon"));
        assertTrue(err.toString().contains("'soon' is not a duration"), err.toString());
    }
}
