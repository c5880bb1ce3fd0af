package dev.fenceline.transport.tcp;

import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.fenceline.testkit.process.Netns;
import dev.fenceline.testkit.process.RailOrigin;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Real rail failover between two hosts: worker processes in two network namespaces joined by two
 * veth rails stream puts and atomics with fences; rail 1's link goes down mid-run and the
 * endpoint must fail over to rail 2 within about twice the TCP user timeout (2 s), losing and
 * duplicating nothing; when the link comes back, the lane recovers and carries traffic again.
 * Skipped, with the reason, without root or iproute2; CI runs as root.
 */
@Timeout(value = 180, unit = TimeUnit.SECONDS)
class NetnsRailFailoverTest {
    private static final long USER_TIMEOUT_MS = 2000;

    private static String config(String... listen) {
        return """
                fenceline.transports = [tcp]
                fenceline.transport.tcp.listen = ["%s"]
                fenceline.transport.tcp.user-timeout = 2s
                fenceline.transport.tcp.connect-timeout = 2s
                fenceline.transport.tcp.reconnect { min-backoff = 100ms, max-backoff = 500ms }
                """.formatted(String.join("\", \"", listen));
    }

    @Test
    void railOneDownFailsOverToRailTwoAndRecovers() throws Exception {
        String why = Netns.unavailable();
        Assumptions.assumeTrue(why == null, () -> "skipped: " + why);
        Path logs = Paths.get("target", "netns");
        // The workers' shared secret reaches them through the environment, never the command line.
        java.util.Map<String, String> env = java.util.Map.of("FENCELINE_TCP_SECRET",
                java.util.HexFormat.of().formatHex(Handshake.nonce()));
        try (Netns net = Netns.create()) {
            RailOrigin origin = RailOrigin.start(net, logs, env, config("10.77.1.2:0", "10.77.2.2:0"),
                    config("10.77.1.1:0", "10.77.2.1:0"));
            RailOrigin.Progress running = origin.await(p -> p.iterations() > 500 && p.up(0) && p.up(1),
                    "traffic on both rails");
            long railOneConnection = running.lanes().get(0).connection();
            long downAt = System.nanoTime();
            net.ip("-n", net.a, "link", "set", "va1", "down");
            RailOrigin.Progress failed = origin.await(p -> !p.up(0), "lane 0 to fail");
            long detectMs = (System.nanoTime() - downAt) / 1_000_000;
            long stalledAt = failed.iterations();
            origin.await(p -> p.iterations() > stalledAt + 200 && p.up(1), "traffic on rail 2");
            System.out.printf("rail 1 down: lane 0 failed after %d ms (TCP user timeout %d ms)%n", detectMs,
                    USER_TIMEOUT_MS);
            assertTrue(detectMs <= 2 * USER_TIMEOUT_MS + 1000, "failover took " + detectMs + " ms, more than about"
                    + " twice the user timeout of " + USER_TIMEOUT_MS + " ms");

            net.ip("-n", net.a, "link", "set", "va1", "up");
            long upAt = System.nanoTime();
            RailOrigin.Progress recovered = origin.await(p -> p.up(0)
                    && p.lanes().get(0).connection() != railOneConnection, "lane 0 to recover");
            System.out.printf("rail 1 up: lane 0 recovered after %d ms, as connection %d%n",
                    (System.nanoTime() - upAt) / 1_000_000, recovered.lanes().get(0).connection());
            long before = net.txBytes(net.a, "va1");
            long iterationsBefore = origin.awaitFresh(p -> true, "progress after lane 0 recovered").iterations();
            origin.await(p -> p.iterations() > iterationsBefore + 2000, "more traffic");
            long sent = net.txBytes(net.a, "va1") - before;
            assertTrue(sent > 1_000_000, "rail 1 carried only " + sent + " bytes after it recovered");

            String result = origin.stop();
            System.out.println(result);
            assertTrue(result.startsWith("RESULT ok"), result);
        }
    }
}
