package dev.fenceline.perf;

import com.typesafe.config.Config;
import java.util.ArrayList;
import java.util.List;

/**
 * How a run reaches its target worker when it is not in this JVM: a forked process on this host
 * ({@code --processes 2}), or a {@code fenceline perf --server} over a control connection
 * ({@code --connect}).
 */
final class PerfPeers {
    private PerfPeers() {
    }

    /** Starts the target process with the same configuration; a tcp secret travels in its environment. */
    static PerfSession.Peer fork(Config config) throws java.io.IOException {
        // Never on a command line: the secret goes through the environment, which reference.conf reads.
        String hocon = config.withoutPath("fenceline.transport.tcp.secret")
                .withoutPath("fenceline.transport.tcp.tls.key-store-password")
                .withoutPath("fenceline.transport.tcp.tls.trust-store-password").getConfig("fenceline").root()
                .render(com.typesafe.config.ConfigRenderOptions.concise());
        List<String> cmd = new ArrayList<>(List.of(java.nio.file.Path.of(System.getProperty("java.home"), "bin",
                "java").toString(), "--add-exports", "java.base/jdk.internal.misc=ALL-UNNAMED"));
        cmd.addAll(heapFlags(java.lang.management.ManagementFactory.getRuntimeMXBean().getInputArguments()));
        cmd.add(NettyLeakDetection.targetFlag()); // both sides measure with the same
        cmd.addAll(List.of("-cp", System.getProperty("java.class.path"), PerfTarget.class.getName(),
                "{\"fenceline\":" + hocon + "}"));
        ProcessBuilder pb = new ProcessBuilder(cmd).redirectError(ProcessBuilder.Redirect.INHERIT);
        if (config.hasPath("fenceline.transport.tcp.secret")) {
            pb.environment().put("FENCELINE_TCP_SECRET", config.getString("fenceline.transport.tcp.secret"));
        }
        if (config.hasPath("fenceline.transport.tcp.tls.key-store-password")) {
            pb.environment().put("FENCELINE_TLS_KEY_STORE_PASSWORD", config.getString(
                    "fenceline.transport.tcp.tls.key-store-password"));
            pb.environment().put("FENCELINE_TLS_TRUST_STORE_PASSWORD", config.getString(
                    "fenceline.transport.tcp.tls.trust-store-password"));
        }
        Process p = pb.start();
        // Each answer within the bound a --connect driver keeps: a child that hangs fails the run.
        return new PerfSession.Peer(new BoundedPipe(p, REPLY_TIMEOUT_MS), p.getOutputStream(), () -> { }, () -> {
            p.getOutputStream().close(); // the target serves until its stdin closes
            try {
                if (!p.waitFor(20, java.util.concurrent.TimeUnit.SECONDS)) {
                    p.destroyForcibly();
                }
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                p.destroyForcibly();
            }
        });
    }

    /** The flags a target process takes from its driver: the heap's sizes, its pages, its collector. */
    private static final java.util.regex.Pattern HEAP_FLAG = java.util.regex.Pattern.compile(
            "-Xm[snx].*|-XX:(InitialHeapSize|MaxHeapSize|NewSize|MaxNewSize)=.*"
                    + "|-XX:[+-](AlwaysPreTouch|UseTransparentHugePages|UseLargePages|Use[A-Za-z0-9]*GC)");

    /**
     * The driver's heap flags, for the target process: both sides of a run measure with the same heap
     * (bin/fenceline gives the perf tool's JVM a heap touched at start). Not the rest (agents, JFR,
     * logs to files), which would clash or mean nothing in the target.
     *
     * @param driverArguments this JVM's arguments
     * @return those that size the heap, touch or back its pages, or choose its collector, in their order
     */
    static List<String> heapFlags(List<String> driverArguments) {
        List<String> heap = new ArrayList<>();
        for (String a : driverArguments) {
            if (HEAP_FLAG.matcher(a).matches()) {
                heap.add(a);
            }
        }
        return heap;
    }

    /**
     * How long the driver waits for each answer of a --server after set-up, or of its target process
     * (its compile time at once, FLUSHED within its own 30 s bounds of a flush and a close); the
     * driver reads nothing else.
     */
    static final int REPLY_TIMEOUT_MS = 120_000;

    /** The driver's side of --connect: a control connection to the server. */
    static PerfSession.Peer dial(java.net.InetSocketAddress at, String transport) throws java.io.IOException {
        return dial(at, transport, REPLY_TIMEOUT_MS);
    }

    /**
     * The driver's side of --connect, with a bound of its own on each answer.
     *
     * @param at the server's control address
     * @param transport the transport this side runs (the server must run the same)
     * @param replyTimeoutMs once set up, how long each read waits: the driver reads only the answers to
     *     what it asked, so a server that stops answering (a host gone without a reset) fails the run
     *     (then the session asks it nothing more, and closing waits at most 20 s for its end)
     */
    static PerfSession.Peer dial(java.net.InetSocketAddress at, String transport, int replyTimeoutMs)
            throws java.io.IOException {
        java.net.Socket control = new java.net.Socket();
        try {
            control.connect(at, 10_000);
            control.setTcpNoDelay(true);
            control.setSoTimeout(PerfCommand.SETUP_TIMEOUT_MS); // PerfSession sets the reply bound once set up
            String hello = PerfTarget.readLine(control.getInputStream());
            String expected = PerfTarget.GREETING + " " + transport;
            String program = PerfTarget.GREETING.substring(0, PerfTarget.GREETING.indexOf(' ') + 1);
            if (hello != null && hello.startsWith(program) && !hello.startsWith(PerfTarget.GREETING + " ")) {
                throw new java.io.IOException("the server at " + at + " speaks '" + hello + "', this side '"
                        + PerfTarget.GREETING + "': run the same build on both");
            }
            if (hello == null || !hello.startsWith(PerfTarget.GREETING + " ")) {
                throw new java.io.IOException("what answers at " + at + " is not a fenceline perf --server (it said "
                        + (hello == null ? "nothing" : "'" + hello.substring(0, Math.min(60, hello.length())) + "'")
                        + ")");
            }
            if (!hello.equals(expected)) {
                throw new java.io.IOException("the server at " + at + " runs '" + hello.substring(
                        PerfTarget.GREETING.length() + 1) + "', this side -x " + transport + ": use the same on both");
            }
        } catch (java.io.IOException e) {
            control.close();
            throw new java.io.IOException("fenceline perf --connect " + at + ": " + e.getMessage(), e);
        }
        return new PerfSession.Peer(control.getInputStream(), control.getOutputStream(),
                () -> control.setSoTimeout(replyTimeoutMs), () -> {
            control.shutdownOutput(); // the server serves until our side closes, then closes its own
            control.setSoTimeout(20_000);
            try {
                while (control.getInputStream().read() >= 0) {
                    // drain until the server is done
                }
            } finally {
                control.close();
            }
        });
    }

    /**
     * Parses HOST, HOST:PORT, an IPv6 address, or [IPv6]:PORT.
     *
     * @param cl the command, for its usage error
     * @param value what was given
     * @param option the option it was given to, named in the error
     * @param mayBeZero whether port 0 (any free port) is allowed
     * @return the address, on {@link PerfCommand#DEFAULT_PORT} unless a port is given
     */
    static java.net.InetSocketAddress hostPort(picocli.CommandLine cl, String value, String option,
            boolean mayBeZero) {
        String host = value;
        String portText = null;
        if (value.startsWith("[")) {
            int close = value.indexOf(']');
            host = close < 0 ? "" : value.substring(1, close);
            portText = close >= 0 && value.length() > close + 1 && value.charAt(close + 1) == ':'
                    ? value.substring(close + 2) : close == value.length() - 1 ? null : "";
        } else if (value.indexOf(':') >= 0 && value.indexOf(':') == value.lastIndexOf(':')) {
            host = value.substring(0, value.indexOf(':'));
            portText = value.substring(value.indexOf(':') + 1);
        }
        int port = PerfCommand.DEFAULT_PORT;
        if (portText != null) {
            try {
                port = Integer.parseInt(portText);
            } catch (NumberFormatException e) {
                port = -1;
            }
        }
        if (host.isEmpty() || port < (mayBeZero ? 0 : 1) || port > 65535) {
            throw new picocli.CommandLine.ParameterException(cl, option + " " + value
                    + ": expected HOST[:PORT] (or [IPv6]:PORT) with a port from " + (mayBeZero ? 0 : 1) + " to 65535");
        }
        return new java.net.InetSocketAddress(host, port);
    }
}
