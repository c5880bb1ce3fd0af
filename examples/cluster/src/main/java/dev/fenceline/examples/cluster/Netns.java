package dev.fenceline.examples.cluster;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * Test hosts for the cluster demo: one network namespace per member, joined by two rails (two
 * bridges in a namespace of their own, 10.78.1.0/24 and 10.78.2.0/24; member i is .(i+1) on each).
 * Needs root and iproute2. Names carry this JVM's pid; {@link #close()} deletes the namespaces,
 * which removes their links.
 */
final class Netns implements AutoCloseable {
    private final String tag = Long.toString(ProcessHandle.current().pid());
    private final String switchNs = "fl-sw-" + tag;
    private final List<String> members = new ArrayList<>();

    private Netns() {
    }

    /** @return why namespaces cannot be used here, or null if they can */
    static String unavailable() {
        if (!"root".equals(System.getProperty("user.name"))) {
            return "network namespaces need root (running as " + System.getProperty("user.name") + ")";
        }
        String probe = "fl-probe-" + ProcessHandle.current().pid();
        try {
            String[] r = run("ip", "netns", "add", probe);
            if (!r[0].equals("0")) {
                return "`ip netns add` failed: " + r[1];
            }
            r = run("ip", "-n", probe, "link", "add", "br0", "type", "bridge");
            return r[0].equals("0") ? null : "this kernel gives network namespaces no bridges: " + r[1];
        } catch (IOException e) {
            return "iproute2 (`ip`) is not installed: " + e.getMessage();
        } finally {
            try {
                run("ip", "netns", "del", probe);
            } catch (IOException ignored) {
                // it was never made
            }
        }
    }

    /**
     * @param n how many members
     * @return the namespaces, with both rails up
     * @throws IOException if a step fails (what was made is removed)
     */
    static Netns create(int n) throws IOException {
        String why = unavailable();
        if (why != null) {
            throw new IOException("--netns: " + why);
        }
        Netns net = new Netns();
        try {
            net.ip("netns", "add", net.switchNs);
            for (int r = 1; r <= 2; r++) {
                net.ip("-n", net.switchNs, "link", "add", "br" + r, "type", "bridge");
                net.ip("-n", net.switchNs, "link", "set", "br" + r, "up");
            }
            for (int i = 0; i < n; i++) {
                String ns = "fl-m" + i + "-" + net.tag;
                net.ip("netns", "add", ns);
                net.members.add(ns);
                net.ip("-n", ns, "link", "set", "lo", "up");
                for (int r = 1; r <= 2; r++) {
                    String inside = "r" + r;
                    String outside = "m" + i + "r" + r;
                    net.ip("link", "add", inside, "netns", ns, "type", "veth", "peer", "name", outside, "netns",
                            net.switchNs);
                    net.ip("-n", ns, "addr", "add", "10.78." + r + "." + (i + 1) + "/24", "dev", inside);
                    net.ip("-n", ns, "link", "set", inside, "up");
                    net.ip("-n", net.switchNs, "link", "set", outside, "master", "br" + r);
                    net.ip("-n", net.switchNs, "link", "set", outside, "up");
                }
            }
        } catch (IOException | RuntimeException e) {
            net.close();
            throw e;
        }
        return net;
    }

    /** @return member i's namespace */
    String namespace(int i) {
        return members.get(i);
    }

    /** @return member i's address on rail 1 (Artery and the first tcp rail) */
    String rail1(int i) {
        return "10.78.1." + (i + 1);
    }

    /** @return member i's address on rail 2 */
    String rail2(int i) {
        return "10.78.2." + (i + 1);
    }

    private void ip(String... args) throws IOException {
        String[] cmd = new String[args.length + 1];
        cmd[0] = "ip";
        System.arraycopy(args, 0, cmd, 1, args.length);
        String[] r = run(cmd);
        if (!r[0].equals("0")) {
            throw new IOException(String.join(" ", cmd) + " failed (" + r[0] + "): " + r[1]);
        }
    }

    @Override
    public void close() {
        List<String> all = new ArrayList<>(members);
        all.add(switchNs);
        for (String ns : all) {
            try {
                run("ip", "netns", "del", ns);
            } catch (IOException ignored) {
                // best effort: nothing else to do
            }
        }
    }

    /** @return the exit code and the output */
    private static String[] run(String... cmd) throws IOException {
        Path out = Files.createTempFile("fenceline-ip", ".out");
        try {
            Process p = new ProcessBuilder(cmd).redirectErrorStream(true).redirectOutput(out.toFile()).start();
            if (!p.waitFor(30, TimeUnit.SECONDS)) {
                p.destroyForcibly();
                throw new IOException(String.join(" ", cmd) + " did not finish within 30 s");
            }
            return new String[] {Integer.toString(p.exitValue()), Files.readString(out, StandardCharsets.UTF_8)};
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IOException("interrupted", e);
        } finally {
            Files.deleteIfExists(out);
        }
    }
}
