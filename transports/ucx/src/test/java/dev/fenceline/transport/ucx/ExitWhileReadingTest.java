package dev.fenceline.transport.ucx;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * A JVM that exits (System.exit, a SIGTERM) while its threads still read a region UCT allocated:
 * the runtime, closed on the way out, must not unmap memory those threads may touch, or the JVM dies
 * of a SIGSEGV instead of exiting (seen in a perf run stopped by SIGTERM).
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class ExitWhileReadingTest {
    @TempDir
    Path dir;

    @BeforeAll
    static void ucx() {
        UcxAssumptions.ucxAvailable();
    }

    @Test
    void exitingWhileAThreadReadsARegionIsACleanExit() throws Exception {
        Process p = new ProcessBuilder(Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                "--add-exports", "java.base/jdk.internal.misc=ALL-UNNAMED", "-XX:ErrorFile=" + dir.resolve("hs_err.log"),
                "-cp", System.getProperty("java.class.path"), ExitWhileReadingMain.class.getName())
                .directory(dir.toFile()).redirectErrorStream(true).start();
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertTrue(p.waitFor(60, TimeUnit.SECONDS), out);
        Path crash = dir.resolve("hs_err.log");
        assertEquals(0, p.exitValue(), out + (Files.exists(crash) ? "\n" + String.join("\n",
                Files.readAllLines(crash).subList(0, 20)) : ""));
        assertTrue(out.contains("READING [ucx]"), out);
        assertTrue(!Files.exists(crash), "no crash report");
    }
}
