package dev.fenceline.transport.ucx;

import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Path;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * A worker whose own posix segments UCX would name otherwise than by a descriptor through /proc (no
 * /proc link: UCX's environment here; then by a name under /dev/shm, or by a path in another
 * directory) does not open posix, and says why: it takes only peers' segments named through /proc
 * ({@code UctPeerInputTest#aPeersPosixSegmentNamedOtherwiseThanThroughProcIsRefused}). With UCX's
 * default it opens. Each in a JVM of its own, since UCX reads its environment once.
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
    void posixWhoseSegmentsAreNamedOtherwiseThanThroughProcIsNotOpened() throws Exception {
        for (String d : new String[] {dir.toString(), "/dev/shm"}) {
            String out = run(Map.of("UCX_POSIX_USE_PROC_LINK", "n", "UCX_POSIX_DIR", d));
            assertTrue(out.contains("REFUSED ") && out.contains("posix on memory names its segments otherwise than by"
                    + " a descriptor through /proc"), d + ": " + out);
        }
        String standard = run(Map.of());
        assertTrue(standard.contains("OPENED"), standard);
    }

    private static String run(Map<String, String> env) throws Exception {
        ProcessBuilder pb = ChildJvm.command(PathNamedPosixMain.class);
        pb.environment().putAll(env);
        return ChildJvm.output(pb);
    }
}
