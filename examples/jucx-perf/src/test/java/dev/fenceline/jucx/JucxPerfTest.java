package dev.fenceline.jucx;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * The JUCX peer of compare-ucx runs against this machine's UCX and reports figures in the units
 * compare-ucx reads. Each run is a child JVM, as compare-ucx runs it, so a native fault in UCX fails
 * the test instead of the build. Skipped where Debian's libucx0 is not installed.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class JucxPerfTest {
    private static double run(String... args) throws IOException, InterruptedException {
        List<String> cmd = new ArrayList<>(List.of(Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                "-cp", System.getProperty("java.class.path"), JucxPerf.class.getName()));
        cmd.addAll(List.of(args));
        ProcessBuilder pb = new ProcessBuilder(cmd).redirectErrorStream(true);
        pb.environment().put("UCX_TLS", "posix,cma,self");
        pb.environment().put("UCX_LOG_LEVEL", "error");
        Process p = pb.start();
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertTrue(p.waitFor(60, TimeUnit.SECONDS), "JucxPerf " + String.join(" ", args) + " did not end");
        assertEquals(0, p.exitValue(), "JucxPerf " + String.join(" ", args) + ":\n" + out);
        String line = out.lines().filter(l -> l.startsWith("RESULT " + args[0] + " ")).findFirst()
                .orElseThrow(() -> new AssertionError("no RESULT line:\n" + out));
        return Double.parseDouble(line.split(" ")[2]);
    }

    @Test
    void measuresPutsAndActiveMessagesOverSharedMemory() throws Exception {
        Assumptions.assumeTrue(Files.exists(Path.of("/usr/lib/x86_64-linux-gnu/libucp.so.0"))
                || Files.exists(Path.of("/lib/x86_64-linux-gnu/libucp.so.0")), "libucx0 is not installed");
        double putLat = run("put_lat", "8", "2000", "200");
        assertTrue(putLat > 0 && putLat < 1000, "put_lat one way " + putLat + " us");
        double amLat = run("am_lat", "8", "2000", "200");
        assertTrue(amLat > 0 && amLat < 1000, "am_lat one way " + amLat + " us");
        double rate = run("put_bw_implicit", "8", "100000", "10000", "256");
        assertTrue(rate > 1000, "implicit 8-byte puts at " + rate + " /s");
        double bandwidth = run("put_bw", "65536", "2000", "200", "16");
        assertTrue(bandwidth > 10, "64 KiB puts at " + bandwidth + " MB/s");
    }
}
