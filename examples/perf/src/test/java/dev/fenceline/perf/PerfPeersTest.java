package dev.fenceline.perf;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.net.SocketTimeoutException;
import java.nio.charset.StandardCharsets;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * The target process is started with the driver's heap, and nothing else of its JVM's arguments; a
 * --connect driver waits a bounded time for each answer of its server.
 */
class PerfPeersTest {
    @Test
    // A read on a socket is not interrupted: without the bound the test would wait for ever.
    @org.junit.jupiter.api.Timeout(value = 60, threadMode = org.junit.jupiter.api.Timeout.ThreadMode.SEPARATE_THREAD)
    void aServerThatStopsAnsweringAfterSetUpFailsTheDriversReadInsteadOfHangingIt() throws Exception {
        try (ServerSocket server = new ServerSocket(0, 1, java.net.InetAddress.getLoopbackAddress())) {
            Thread serving = new Thread(() -> {
                try (Socket s = server.accept()) {
                    s.getOutputStream().write((PerfTarget.GREETING + " tcp\n").getBytes(StandardCharsets.US_ASCII));
                    s.getOutputStream().flush();
                    s.getInputStream().transferTo(java.io.OutputStream.nullOutputStream()); // then silent
                } catch (java.io.IOException e) {
                    // the driver's side closed
                }
            });
            serving.start();
            PerfSession.Peer peer = PerfPeers.dial(new InetSocketAddress(server.getInetAddress(), server.getLocalPort()),
                    "tcp", 200);
            try {
                peer.ready().done();
                peer.out().write("JIT\n".getBytes(StandardCharsets.US_ASCII));
                peer.out().flush();
                long start = System.nanoTime();
                assertThrows(SocketTimeoutException.class, () -> PerfTarget.expect(peer.in(), "JIT "));
                long waitedMs = (System.nanoTime() - start) / 1_000_000;
                assertTrue(waitedMs >= 150 && waitedMs < 30_000, "waited " + waitedMs + " ms for a 200 ms bound");
            } finally {
                peer.end().close();
                serving.join(30_000);
            }
        }
    }

    @Test
    void theTargetTakesTheDriversLeakDetection() {
        io.netty.util.ResourceLeakDetector.Level before = io.netty.util.ResourceLeakDetector.getLevel();
        try {
            io.netty.util.ResourceLeakDetector.setLevel(io.netty.util.ResourceLeakDetector.Level.PARANOID);
            assertEquals("-Dio.netty.leakDetection.level=paranoid", NettyLeakDetection.targetFlag());
            io.netty.util.ResourceLeakDetector.setLevel(io.netty.util.ResourceLeakDetector.Level.DISABLED);
            assertEquals("-Dio.netty.leakDetection.level=disabled", NettyLeakDetection.targetFlag());
        } finally {
            io.netty.util.ResourceLeakDetector.setLevel(before);
        }
    }

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
