package dev.fenceline.perf;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.util.List;
import org.junit.jupiter.api.Test;

/** The target process is started with the driver's heap, and nothing else of its JVM's arguments. */
class PerfPeersTest {
    @Test
    void theTargetTakesTheDriversHeapFlags() {
        assertEquals(List.of("-Xms1g", "-XX:+AlwaysPreTouch", "-Xmx2g", "-XX:-AlwaysPreTouch"),
                PerfPeers.heapFlags(List.of("--add-exports", "java.base/jdk.internal.misc=ALL-UNNAMED", "-Xms1g",
                        "-XX:+AlwaysPreTouch", "-Dfenceline.x=1", "-Xmx2g", "-XX:StartFlightRecording=filename=a.jfr",
                        "-XX:-AlwaysPreTouch", "-Xss1m")),
                "in their order, so the last one given still wins");
        assertEquals(List.of(), PerfPeers.heapFlags(List.of("-ea", "-Xlog:gc")), "none given: the JVM's defaults");
        assertEquals(List.of("-Xmn256m", "-XX:MaxHeapSize=2g", "-XX:+UseParallelGC", "-XX:+UseTransparentHugePages"),
                PerfPeers.heapFlags(List.of("-Xmn256m", "-XX:MaxHeapSize=2g", "-XX:+UseParallelGC", "-javaagent:a.jar",
                        "-XX:+UseTransparentHugePages", "-Xlog:gc:file=gc.log", "-XX:+UnlockDiagnosticVMOptions")));
    }
}
