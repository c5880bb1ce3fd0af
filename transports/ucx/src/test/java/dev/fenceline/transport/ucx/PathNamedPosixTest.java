package dev.fenceline.transport.ucx;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * A worker whose own posix segments UCX would name by a path (no /proc link, a directory other than
 * /dev/shm: UCX's environment here) does not open posix, and says why: it takes only peers' segments
 * named by /proc or /dev/shm ({@code UctBindingTest#aPeersPosixSegmentNamedByAPathIsRefused}). Without
 * the /proc link but in /dev/shm, it opens. Each in a JVM of its own, since UCX reads its environment once.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class PathNamedPosixTest {
    @TempDir
    Path dir;

    @BeforeAll
    static void ucx() {
        UcxAssumptions.ucxAvailable();
    }

    @Test
    void posixWhoseSegmentsAreNamedByAPathIsNotOpened() throws Exception {
        String out = run(Map.of("UCX_POSIX_USE_PROC_LINK", "n", "UCX_POSIX_DIR", dir.toString()));
        assertTrue(out.contains("REFUSED ") && out.contains("posix on memory names its segments by a path"), out);
        String shm = run(Map.of("UCX_POSIX_USE_PROC_LINK", "n", "UCX_POSIX_DIR", "/dev/shm"));
        assertTrue(shm.contains("OPENED"), shm);
    }

    private static String run(Map<String, String> env) throws Exception {
        ProcessBuilder pb = new ProcessBuilder(Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                "--add-exports", "java.base/jdk.internal.misc=ALL-UNNAMED", "-cp", System.getProperty("java.class.path"),
                PathNamedPosixMain.class.getName()).redirectErrorStream(true);
        pb.environment().putAll(env);
        Process p = pb.start();
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertTrue(p.waitFor(60, TimeUnit.SECONDS), out);
        assertEquals(0, p.exitValue(), out);
        return out;
    }
}
