package dev.fenceline.transport.tcp;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
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
    private static final Pattern PROGRESS = Pattern.compile(
            "PROGRESS (\\d+) (\\d+) lanes=0:(up|down):(\\d+),1:(up|down):(\\d+)");

    private record Progress(long atMs, long iterations, boolean lane0Up, long lane0Connection, boolean lane1Up) {
    }

    @Test
    void railOneDownFailsOverToRailTwoAndRecovers() throws Exception {
        String why = Netns.unavailable();
        Assumptions.assumeTrue(why == null, () -> "skipped: " + why);
        Path logs = Paths.get("target", "netns");
        Files.createDirectories(logs);
        // The workers' shared secret reaches them through the environment, never the command line.
        java.util.Map<String, String> env = java.util.Map.of("FENCELINE_TCP_SECRET",
                java.util.HexFormat.of().formatHex(Handshake.nonce()));
        try (Netns net = Netns.create()) {
            Process target = net.start(net.b, logs.resolve("target.log"), env, java("target", "10.77.1.2:0", "10.77.2.2:0"));
            BufferedReader targetOut = reader(target);
            String address = expectLine(targetOut, "ADDRESS ", logs.resolve("target.log"));
            String[] parts = address.split(" ");
            Process origin = net.start(net.a, logs.resolve("origin.log"), env, java("origin", parts[1], parts[2], parts[3],
                    "10.77.1.1:0", "10.77.2.1:0"));
            BlockingQueue<String> lines = new LinkedBlockingQueue<>();
            Thread pump = new Thread(() -> {
                try (BufferedReader r = reader(origin)) {
                    String l;
                    while ((l = r.readLine()) != null) {
                        lines.add(l);
                    }
                } catch (IOException ignored) {
                    // the process ended
                }
                lines.add("EOF");
            }, "origin-stdout");
            pump.setDaemon(true);
            pump.start();

            Progress running = awaitProgress(lines, p -> p.iterations() > 500 && p.lane0Up() && p.lane1Up(),
                    "traffic on both rails", logs);
            long railOneConnection = running.lane0Connection();
            long downAt = System.nanoTime();
            net.ip("-n", net.a, "link", "set", "va1", "down");
            Progress failed = awaitProgress(lines, p -> !p.lane0Up(), "lane 0 to fail", logs);
            long detectMs = (System.nanoTime() - downAt) / 1_000_000;
            long stalledAt = failed.iterations();
            awaitProgress(lines, p -> p.iterations() > stalledAt + 200 && p.lane1Up(), "traffic on rail 2", logs);
            System.out.printf("rail 1 down: lane 0 failed after %d ms (TCP user timeout %d ms)%n", detectMs,
                    USER_TIMEOUT_MS);
            assertTrue(detectMs <= 2 * USER_TIMEOUT_MS + 1000, "failover took " + detectMs + " ms, more than about"
                    + " twice the user timeout of " + USER_TIMEOUT_MS + " ms");

            net.ip("-n", net.a, "link", "set", "va1", "up");
            long upAt = System.nanoTime();
            Progress recovered = awaitProgress(lines, p -> p.lane0Up() && p.lane0Connection() != railOneConnection,
                    "lane 0 to recover", logs);
            System.out.printf("rail 1 up: lane 0 recovered after %d ms, as connection %d%n",
                    (System.nanoTime() - upAt) / 1_000_000, recovered.lane0Connection());
            long before = net.txBytes(net.a, "va1");
            long iterationsBefore = recovered.iterations();
            awaitProgress(lines, p -> p.iterations() > iterationsBefore + 2000, "more traffic", logs);
            long sent = net.txBytes(net.a, "va1") - before;
            assertTrue(sent > 1_000_000, "rail 1 carried only " + sent + " bytes after it recovered");

            try (OutputStream in = origin.getOutputStream()) {
                in.write("STOP\n".getBytes(StandardCharsets.UTF_8));
            }
            String result = expectLine(lines, "RESULT ", logs);
            System.out.println(result);
            assertTrue(result.startsWith("RESULT ok"), result);
            assertTrue(origin.waitFor(30, TimeUnit.SECONDS));
            assertEquals(0, origin.exitValue(), result);
        }
    }

    private static List<String> java(String... args) {
        List<String> cmd = new ArrayList<>(List.of(Paths.get(System.getProperty("java.home"), "bin", "java").toString(),
                "-cp", System.getProperty("java.class.path"), "-Xmx256m", NetnsPeer.class.getName()));
        cmd.addAll(List.of(args));
        return cmd;
    }

    private static BufferedReader reader(Process p) {
        return new BufferedReader(new InputStreamReader(p.getInputStream(), StandardCharsets.UTF_8));
    }

    private static String expectLine(BufferedReader r, String prefix, Path log) throws IOException {
        String l;
        while ((l = r.readLine()) != null) {
            if (l.startsWith(prefix)) {
                return l;
            }
        }
        throw new AssertionError("the process ended before printing " + prefix + "; its log:\n" + tail(log));
    }

    private static String expectLine(BlockingQueue<String> lines, String prefix, Path logs)
            throws InterruptedException, IOException {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
        while (System.nanoTime() < deadline) {
            String l = lines.poll(1, TimeUnit.SECONDS);
            if (l != null && l.startsWith(prefix)) {
                return l;
            }
            if ("EOF".equals(l)) {
                break;
            }
        }
        throw new AssertionError("no " + prefix + "line from the origin; its log:\n" + tail(logs.resolve("origin.log")));
    }

    private static Progress awaitProgress(BlockingQueue<String> lines, java.util.function.Predicate<Progress> until,
            String what, Path logs) throws InterruptedException, IOException {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
        Progress last = null;
        while (System.nanoTime() < deadline) {
            String l = lines.poll(1, TimeUnit.SECONDS);
            if ("EOF".equals(l)) {
                break;
            }
            Matcher m = l == null ? null : PROGRESS.matcher(l);
            if (m != null && m.matches()) {
                last = new Progress(Long.parseLong(m.group(1)), Long.parseLong(m.group(2)), m.group(3).equals("up"),
                        Long.parseLong(m.group(4)), m.group(5).equals("up"));
                if (until.test(last)) {
                    return last;
                }
            }
        }
        assertNotNull(last, "no progress from the origin");
        throw new AssertionError("timed out waiting for " + what + "; last " + last + "; origin log:\n"
                + tail(logs.resolve("origin.log")));
    }

    private static String tail(Path log) throws IOException {
        if (!Files.exists(log)) {
            return "(no log)";
        }
        List<String> all = Files.readAllLines(log, StandardCharsets.UTF_8);
        return String.join("\n", all.subList(Math.max(0, all.size() - 40), all.size()));
    }
}
