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
        String out = exitCleanly(ExitWhileReadingMain.class);
        assertTrue(out.contains("READING [ucx]"), out);
    }

    /**
     * A thread inside a put through a peer's mapping when the runtime closes (descheduled mid-copy)
     * goes on after the close: the transport's close must not unmap the peer's segment, nor its key
     * table, which the agent published to calling threads.
     */
    @Test
    void aPeersMappingPublishedToCallingThreadsOutlivesTheTransport() throws Exception {
        String out = exitCleanly(ClosedWhileMappedMain.class);
        assertTrue(out.contains("TOUCHED AFTER CLOSE") && out.contains(" 7"), out);
    }

    /** @return the output of a JVM running main, which must exit 0 with no crash report */
    private String exitCleanly(Class<?> main) throws Exception {
        Process p = ChildJvm.command(System.getProperty("java.class.path"),
                java.util.List.of("-XX:ErrorFile=" + dir.resolve("hs_err.log")), main)
                .directory(dir.toFile()).redirectErrorStream(true).start();
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertTrue(p.waitFor(60, TimeUnit.SECONDS), out);
        Path crash = dir.resolve("hs_err.log");
        assertEquals(0, p.exitValue(), out + (Files.exists(crash) ? "\n" + String.join("\n",
                Files.readAllLines(crash).subList(0, 20)) : ""));
        assertTrue(!Files.exists(crash), "no crash report");
        return out;
    }
}
