package dev.fenceline.testkit.process;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * Two network namespaces joined by two veth rails, as test hosts: rail r is {@code var} in
 * namespace {@link #a} with 10.77.r.1/24 and {@code vbr} in {@link #b} with 10.77.r.2/24. Needs root
 * and iproute2; {@link #unavailable()} says why not otherwise. Names carry this JVM's pid, and
 * {@link #close()} kills the processes started in them and deletes the namespaces (which removes
 * their veths), even after a failure.
 */
public final class Netns implements AutoCloseable {
    /** The first namespace's name. */
    public final String a;
    /** The second namespace's name. */
    public final String b;
    private final List<Process> processes = new ArrayList<>();

    private Netns(String a, String b) {
        this.a = a;
        this.b = b;
    }

    /** @return why namespaces cannot be used here, or null if they can */
    public static String unavailable() {
        if (!"root".equals(System.getProperty("user.name"))) {
            return "network namespaces need root (running as " + System.getProperty("user.name") + ")";
        }
        try {
            Result r = run("ip", "netns", "list");
            return r.code == 0 ? null : "`ip netns list` failed: " + r.output;
        } catch (IOException e) {
            return "iproute2 (`ip`) is not installed: " + e.getMessage();
        }
    }

    /**
     * @return the two namespaces, their loopbacks and both rails up
     * @throws IOException if iproute2 refuses (the namespaces made so far are deleted)
     */
    public static Netns create() throws IOException {
        long pid = ProcessHandle.current().pid();
        Netns n = new Netns("fl-a-" + pid, "fl-b-" + pid);
        try {
            n.ip("netns", "add", n.a);
            n.ip("netns", "add", n.b);
            n.ip("-n", n.a, "link", "set", "lo", "up");
            n.ip("-n", n.b, "link", "set", "lo", "up");
            for (int r = 1; r <= 2; r++) {
                n.ip("link", "add", "va" + r, "netns", n.a, "type", "veth", "peer", "name", "vb" + r, "netns", n.b);
                n.ip("-n", n.a, "addr", "add", "10.77." + r + ".1/24", "dev", "va" + r);
                n.ip("-n", n.b, "addr", "add", "10.77." + r + ".2/24", "dev", "vb" + r);
                n.ip("-n", n.a, "link", "set", "va" + r, "up");
                n.ip("-n", n.b, "link", "set", "vb" + r, "up");
            }
        } catch (IOException | RuntimeException e) {
            n.close();
            throw e;
        }
        return n;
    }

    /**
     * Runs {@code ip args...}, for example {@code ip("-n", net.a, "link", "set", "va1", "down")}.
     *
     * @param args the arguments
     * @throws IOException with its output, if it fails
     */
    public void ip(String... args) throws IOException {
        String[] cmd = new String[args.length + 1];
        cmd[0] = "ip";
        System.arraycopy(args, 0, cmd, 1, args.length);
        Result r = run(cmd);
        if (r.code != 0) {
            throw new IOException(String.join(" ", cmd) + " failed (" + r.code + "): " + r.output);
        }
    }

    /**
     * @param ns a namespace
     * @param device an interface in it
     * @return bytes it sent so far
     * @throws IOException if it cannot be read
     */
    public long txBytes(String ns, String device) throws IOException {
        Result r = run("ip", "netns", "exec", ns, "cat", "/sys/class/net/" + device + "/statistics/tx_bytes");
        if (r.code != 0) {
            throw new IOException("reading tx_bytes of " + device + " in " + ns + ": " + r.output);
        }
        return Long.parseLong(r.output.trim());
    }

    /**
     * Starts a command inside a namespace. Killed by {@link #close()}.
     *
     * @param ns the namespace
     * @param log where its standard error goes
     * @param env environment variables besides this JVM's (secrets go here, never on a command line)
     * @param command the command
     * @return the process
     * @throws IOException if it cannot start
     */
    public Process start(String ns, Path log, java.util.Map<String, String> env, List<String> command)
            throws IOException {
        List<String> cmd = new ArrayList<>(List.of("ip", "netns", "exec", ns));
        cmd.addAll(command);
        ProcessBuilder pb = new ProcessBuilder(cmd).redirectError(log.toFile());
        pb.environment().putAll(env);
        Process p = pb.start();
        processes.add(p);
        return p;
    }

    @Override
    public void close() {
        for (Process p : processes) {
            p.destroyForcibly();
        }
        for (Process p : processes) {
            try {
                p.waitFor(10, TimeUnit.SECONDS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
        for (String ns : List.of(a, b)) {
            try {
                run("ip", "netns", "del", ns);
            } catch (IOException ignored) {
                // best effort: nothing else to do
            }
        }
    }

    private record Result(int code, String output) {
    }

    private static Result run(String... cmd) throws IOException {
        Path out = Files.createTempFile("fenceline-ip", ".out");
        try {
            Process p = new ProcessBuilder(cmd).redirectErrorStream(true).redirectOutput(out.toFile()).start();
            if (!p.waitFor(30, TimeUnit.SECONDS)) {
                p.destroyForcibly();
                throw new IOException(String.join(" ", cmd) + " did not finish within 30 s");
            }
            return new Result(p.exitValue(), Files.readString(out, StandardCharsets.UTF_8));
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IOException("interrupted", e);
        } finally {
            Files.deleteIfExists(out);
        }
    }
}
