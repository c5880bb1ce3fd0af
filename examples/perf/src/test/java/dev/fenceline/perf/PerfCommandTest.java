package dev.fenceline.perf;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import picocli.CommandLine;

/** The perf tool runs every test over sim and tcp and reports numbers that make sense. */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class PerfCommandTest {
    private static String run(String... args) {
        return PerfRuns.run(args);
    }

    /** The scale mode connects every endpoint, puts and flushes over each, and checks the words it wrote. */
    @Test
    void endpointsConnectsEveryEndpointAndVerifiesEveryPut() {
        String json = run("--transport", "sim", "--endpoints", "3000", "--idle-seconds", "0.2",
                "--idle-settle-seconds", "0.5", "--json");
        assertTrue(json.contains("\"idle_s\": 0.2, \"idle_settle_s\": 0.5,"), json);
        assertTrue(json.contains("\"test\": \"endpoints\", \"transport\": \"sim\", \"endpoints\": 3000,"
                + " \"connected\": 3000,"), json);
        assertTrue(json.contains("\"verified\": 3000,"), json);
        assertTrue(json.contains("\"connect_failure\": null"), json);
        Matcher heap = Pattern.compile("\"heap_per_endpoint\": ([0-9]+)").matcher(json);
        assertTrue(heap.find(), json);
        assertTrue(Long.parseLong(heap.group(1)) > 0, "an endpoint retains some heap: " + json);
        Matcher used = Pattern.compile("\"heap_per_used_endpoint\": ([0-9]+)").matcher(json);
        assertTrue(used.find(), json);
        assertTrue(Long.parseLong(used.group(1)) > 0, "a used endpoint retains some heap: " + json);
        Matcher closed = Pattern.compile("\"heap_per_closed_endpoint\": (-?[0-9]+)").matcher(json);
        assertTrue(closed.find(), json);
        assertTrue(Long.parseLong(closed.group(1)) < Long.parseLong(used.group(1)) / 2,
                "closed endpoints give their heap back (their actors stop): " + json);
    }

    /**
     * -w is warmed up as given even where fewer are measured (per-operation code needs thousands of
     * calls to be compiled), under the caps the measured count has for large messages.
     */
    @Test
    void theWarmUpIsNotCutToTheMeasuredCount() {
        PerfCommand c = new PerfCommand();
        new CommandLine(c).parseArgs("-n", "2000", "-w", "10000", "--max-bytes", "4000000000");
        assertEquals(10_000, c.counts().warmups(PerfTest.PUT_BW, 8));
        assertEquals(3_814, c.counts().warmups(PerfTest.PUT_BW, 1 << 20), "--max-bytes caps it as it caps -n");
        assertEquals(2_000, c.counts().warmups(PerfTest.PUT_LAT, 1 << 20), "as it caps a latency row of 1 MiB");
        assertEquals(10_000, c.counts().warmups(PerfTest.PUT_LAT, 8));
        PerfCommand d = new PerfCommand();
        new CommandLine(d).parseArgs("-n", "300");
        assertEquals(300, d.counts().warmups(PerfTest.PUT_LAT, 8), "without -w, no more than are measured");
        String given = run("--transport", "sim", "--tests", "put_bw,put_lat", "--sizes", "64", "-n", "300", "-w",
                "1000", "--json", "--no-progress");
        assertEquals(2, given.split("\"warmup\":1000}", -1).length - 1, "each row reports the warm-up it ran: "
                + given);
        String unsaid = run("--transport", "sim", "--tests", "put_bw", "--sizes", "64", "-n", "300", "--json",
                "--no-progress");
        assertTrue(unsaid.contains("\"iterations\":300,") && unsaid.contains("\"warmup\":300}"), unsaid);
    }

    @Test
    void everyTestProducesARowOverTcp() {
        String json = run("--transport", "tcp", "--tests", "all", "--sizes", "8,4K", "-n", "200", "-w", "20",
                "--json", "--baseline");
        for (PerfTest t : PerfTest.values()) {
            assertTrue(json.contains("\"test\":\"" + t.id() + "\""), t.id() + " missing in " + json);
        }
        assertTrue(json.contains("\"test\":\"stream_bw\",\"transport\":\"raw-netty\""), json);
        assertTrue(json.contains("\"test\":\"pingpong_lat\",\"transport\":\"raw-netty\""), json);
        // Every latency row also gives the median of its last iterations, ucx_perftest's statistic.
        int latencyRows = json.split("\"p50_us\":", -1).length - 1;
        assertEquals(latencyRows, json.split("\"p50_last_us\":", -1).length - 1, json);
        // Every latency is positive and ordered; every rate positive.
        Matcher m = Pattern.compile("\"p50_us\":([0-9.]+),\"p99_us\":([0-9.]+)").matcher(json);
        int rows = 0;
        while (m.find()) {
            rows++;
            double p50 = Double.parseDouble(m.group(1));
            double p99 = Double.parseDouble(m.group(2));
            assertTrue(p50 > 0 && p99 >= p50, m.group());
        }
        assertTrue(rows >= 8, "latency rows: " + rows);
        Matcher rate = Pattern.compile("\"rate\":([0-9.]+)").matcher(json);
        while (rate.find()) {
            assertTrue(Double.parseDouble(rate.group(1)) > 0, rate.group());
        }
    }

    @Test
    void textOutputOverSim() {
        String text = run("--transport", "sim", "--tests", "put_bw,fadd_lat", "--sizes", "64", "-n", "300", "-w",
                "10", "--no-progress");
        assertTrue(text.contains("transport sim"), text);
        assertTrue(text.matches("(?s).*put_bw +sim +64B +300 +[0-9.]+ MB/s.*"), text);
        assertTrue(text.matches("(?s).*fadd_lat +sim +8B +300 +latency us: p50.*"), text);
    }

    /** The benchmark shape: shared memory between two processes. */
    @Test
    void twoProcessesOverShm() {
        String json = run("--transport", "shm", "--processes", "2", "--tests", "put_bw,get_bw,fadd_lat,am_lat",
                "--sizes", "8,64K", "-n", "300", "-w", "30", "--json");
        for (String t : new String[] {"put_bw", "get_bw", "fadd_lat", "am_lat"}) {
            assertTrue(json.contains("\"test\":\"" + t + "\",\"transport\":\"shm\""), t + " missing in " + json);
        }
    }

    /** A run across hosts, here two sides in one JVM: a server takes the driver's control connection. */
    @Test
    void serverAndConnectOverShm() throws Exception {
        // Port 0: the server binds a free port itself and says which (no probe-then-bind race).
        java.util.concurrent.CompletableFuture<Integer> bound = new java.util.concurrent.CompletableFuture<>();
        java.util.regex.Pattern listening = java.util.regex.Pattern.compile("waiting for a driver on .*:(\\d+)");
        java.io.Writer watcher = new java.io.Writer() {
            private final StringBuilder text = new StringBuilder();

            @Override
            public synchronized void write(char[] c, int off, int len) {
                text.append(c, off, len);
                java.util.regex.Matcher m = listening.matcher(text);
                if (m.find()) {
                    bound.complete(Integer.parseInt(m.group(1)));
                }
            }

            @Override
            public void flush() {
            }

            @Override
            public void close() {
            }
        };
        CommandLine serverCommand = new CommandLine(new PerfCommand());
        serverCommand.setOut(new PrintWriter(watcher, true));
        java.util.concurrent.CompletableFuture<Integer> server = java.util.concurrent.CompletableFuture.supplyAsync(
                () -> serverCommand.execute("--transport", "shm", "--server=127.0.0.1:0"));
        int port = bound.get(30, TimeUnit.SECONDS);
        String json = run("--transport", "shm", "--connect", "127.0.0.1:" + port, "--tests", "put_bw,fadd_lat,am_lat",
                "--sizes", "8,4K", "-n", "300", "-w", "30", "--json");
        assertEquals(0, server.get(60, TimeUnit.SECONDS));
        for (String t : new String[] {"put_bw", "fadd_lat", "am_lat"}) {
            assertTrue(json.contains("\"test\":\"" + t + "\",\"transport\":\"shm\""), t + " missing in " + json);
        }
    }

    /** Something else on the port, or a server of another build: the driver says so instead of waiting for ever. */
    @Test
    void connectingToAnotherProgramFailsClearly() throws Exception {
        String[][] cases = {{"SSH-2.0-OpenSSH_9.2", "is not a fenceline perf --server (it said 'SSH-2.0"},
            {"FENCELINE-PERF 1 shm", "speaks 'FENCELINE-PERF 1 shm', this side '" + PerfTarget.GREETING
                    + "': run the same build on both"}};
        for (String[] c : cases) {
            try (java.net.ServerSocket other = new java.net.ServerSocket(0, 1,
                    java.net.InetAddress.getLoopbackAddress())) {
                java.util.concurrent.CompletableFuture<Void> answer = java.util.concurrent.CompletableFuture.runAsync(
                        () -> {
                            try (java.net.Socket s = other.accept()) {
                                s.getOutputStream().write((c[0] + "\n").getBytes(StandardCharsets.US_ASCII));
                                s.getInputStream().read();
                            } catch (java.io.IOException e) {
                                throw new java.io.UncheckedIOException(e);
                            }
                        });
                StringWriter err = new StringWriter();
                CommandLine cl = new CommandLine(new PerfCommand());
                cl.setErr(new PrintWriter(err));
                int code = cl.execute("--transport", "shm", "--connect", "127.0.0.1:" + other.getLocalPort());
                assertEquals(1, code, err.toString());
                assertTrue(err.toString().contains(c[1]), err.toString());
                answer.get(10, TimeUnit.SECONDS);
            }
        }
    }

    @Test
    void implicitCompletionStreams() {
        String text = run("--transport", "sim", "--tests", "put_bw,add_mr", "--sizes", "64", "-n", "2000", "-w", "100",
                "--window", "128", "--completion", "implicit", "--no-progress");
        assertTrue(text.contains("implicit completion"), text);
        assertTrue(text.matches("(?s).*put_bw +sim +64B +2000 +[0-9.]+ MB/s.*"), text);
        assertTrue(text.matches("(?s).*add_mr +sim +8B +2000 +[0-9.]+ MB/s.*"), text);
    }

    /**
     * Each operation issued from the previous one's completion: on the thread that completes it
     * (sim), or in a loop where it is done on return (shm's calling thread), never deeper than one
     * callback; every row counts all its operations.
     */
    @Test
    void chainedCompletionLatencies() {
        for (String transport : new String[] {"sim", "shm"}) {
            String text = run("--transport", transport, "--tests", "fadd_lat,get_lat,cswap_lat", "--sizes", "8", "-n",
                    "20000", "-w", "100", "--completion", "chained", "--no-progress");
            assertTrue(text.contains("chained completion"), text);
            for (String test : new String[] {"fadd_lat", "get_lat", "cswap_lat"}) {
                assertTrue(text.matches("(?s).*" + test + " +" + transport + " +8B +20000 +latency us: p50 .*"), text);
            }
        }
        StringWriter err = new StringWriter();
        CommandLine cl = new CommandLine(new PerfCommand());
        cl.setErr(new PrintWriter(err));
        assertEquals(2, cl.execute("--transport", "sim", "--completion", "eventually"));
        assertTrue(err.toString().contains("expected per-op, implicit or chained"), err.toString());
    }

    /**
     * A tcp run says which congestion control its lanes ran under, in its header and in its JSON rows:
     * it moves the large-put rows by some 40 %.
     */
    @Test
    void aTcpRunNamesItsCongestionControl() throws Exception {
        assertEquals("cubic", TcpCongestion.shown(com.typesafe.config.ConfigFactory.parseString(
                "fenceline.transport.tcp.congestion-control = cubic")));
        String text = run("--transport", "sim", "--tests", "fadd_lat", "-n", "200", "-w", "20", "--no-progress");
        assertFalse(text.contains("congestion control"), text);
        java.nio.file.Path p = java.nio.file.Path.of("/proc/sys/net/ipv4/tcp_congestion_control");
        org.junit.jupiter.api.Assumptions.assumeTrue(java.nio.file.Files.isReadable(p), p + " cannot be read here");
        String kernel = java.nio.file.Files.readString(p).trim();
        text = run("--transport", "tcp", "--tests", "fadd_lat", "-n", "200", "-w", "20", "--no-progress");
        assertTrue(text.contains("TCP congestion control " + kernel + " (this host's kernel's)"), text);
        // The JSON rows say it too, the tcp transport's and the raw Netty baseline's; a sim row does not.
        String json = run("--transport", "tcp", "--tests", "fadd_lat", "--sizes", "8", "-n", "200", "-w", "20",
                "--json", "--baseline");
        String named = ",\"tcp_congestion_control\":\"" + kernel + "\"}";
        assertEquals(3, json.split(java.util.regex.Pattern.quote(named), -1).length - 1,
                "fadd_lat, stream_bw and pingpong_lat each name " + kernel + ": " + json);
        String sim = run("--transport", "sim", "--tests", "fadd_lat", "-n", "200", "-w", "20", "--json");
        assertFalse(sim.contains("tcp_congestion_control"), sim);
        assertEquals("cubic", TcpCongestion.effective("cubic"));
        assertEquals(kernel, TcpCongestion.effective(""));
    }

    /**
     * The run measures with the Netty leak detection asked for (disabled by default; the forked
     * target's flag: {@link PerfPeersTest}), or the JVM's own where Netty's property set it, and
     * gives the JVM its level back; an unknown level is a usage error.
     */
    @Test
    void nettyLeakDetectionIsTheRunsChoice() {
        io.netty.util.ResourceLeakDetector.Level before = io.netty.util.ResourceLeakDetector.getLevel();
        try {
            String text = run("--transport", "tcp", "--tests", "fadd_lat", "-n", "200", "-w", "20", "--no-progress");
            assertTrue(text.contains("Netty leak detection disabled"), text);
            text = run("--transport", "tcp", "--processes", "2", "--tests", "fadd_lat", "-n", "200", "-w", "20",
                    "--netty-leak-detection", "paranoid", "--no-progress");
            assertTrue(text.contains("Netty leak detection paranoid"), text);
            assertTrue(text.matches("(?s).*fadd_lat +tcp +8B +200 +latency us: p50 .*"), text);
            assertEquals(before, io.netty.util.ResourceLeakDetector.getLevel(), "the JVM's own level back after a run");
            // A JVM started with Netty's property keeps its level unless the option is given.
            io.netty.util.ResourceLeakDetector.setLevel(io.netty.util.ResourceLeakDetector.Level.ADVANCED);
            System.setProperty("io.netty.leakDetection.level", "advanced");
            try {
                text = run("--transport", "tcp", "--tests", "fadd_lat", "-n", "200", "-w", "20", "--no-progress");
                assertTrue(text.contains("Netty leak detection advanced"), text);
                text = run("--transport", "tcp", "--tests", "fadd_lat", "-n", "200", "-w", "20", "--no-progress",
                        "--netty-leak-detection", "disabled");
                assertTrue(text.contains("Netty leak detection disabled"), text);
            } finally {
                System.clearProperty("io.netty.leakDetection.level");
            }
            StringWriter err = new StringWriter();
            CommandLine cl = new CommandLine(new PerfCommand());
            cl.setErr(new PrintWriter(err));
            assertEquals(2, cl.execute("--transport", "sim", "--netty-leak-detection", "sometimes"));
            assertTrue(err.toString().contains("--netty-leak-detection sometimes: expected disabled, simple, advanced"
                    + " or paranoid"), err.toString());
        } finally {
            io.netty.util.ResourceLeakDetector.setLevel(before);
        }
    }

    /** Chained fetch-adds over tcp with the event loops spinning: every operation counted. */
    @Test
    void busyPollingTcp() {
        String text = run("--transport", "tcp", "--tests", "fadd_lat", "-n", "2000", "-w", "100", "--completion",
                "chained", "--busy-poll", "--no-progress");
        assertTrue(text.matches("(?s).*fadd_lat +tcp +8B +2000 +latency us: p50 .*"), text);
        StringWriter err = new StringWriter();
        CommandLine cl = new CommandLine(new PerfCommand());
        cl.setErr(new PrintWriter(err));
        assertEquals(2, cl.execute("--transport", "shm", "--busy-poll"));
        assertTrue(err.toString().contains("--busy-poll is tcp's (its event loops) and ucx's"), err.toString());
    }

    /**
     * Over ucx, --busy-poll keeps the progress threads polling, with or without an event to sleep on
     * (cma has none), holding answers as by default; tcp's setting untouched.
     */
    @Test
    void busyPollingUcxSpinsItsProgressThreads() {
        PerfCommand cmd = new PerfCommand();
        new CommandLine(cmd).parseArgs("--transport", "ucx", "--tests", "am_lat", "--busy-poll");
        com.typesafe.config.Config c = cmd.config(false);
        assertEquals(1_000_000, c.getInt("fenceline.transport.ucx.spin-passes"));
        assertEquals("busy-spin", c.getString("fenceline.transport.ucx.idle-strategy"));
        assertEquals(java.time.Duration.ofNanos(50_000), c.getDuration("fenceline.transport.ucx.answer-hold"));
        assertEquals(false, c.getBoolean("fenceline.transport.tcp.busy-poll"));
        PerfCommand plain = new PerfCommand();
        new CommandLine(plain).parseArgs("--transport", "ucx", "--tests", "am_lat");
        com.typesafe.config.Config d = plain.config(false);
        assertEquals("auto", d.getString("fenceline.transport.ucx.spin-passes"));
        assertEquals("backoff", d.getString("fenceline.transport.ucx.idle-strategy"));
        org.junit.jupiter.api.Assumptions.assumeTrue(dev.fenceline.transport.ucx.UcxNative.isAvailable(),
                () -> "UCX: " + dev.fenceline.transport.ucx.UcxNative.unavailabilityCause());
        // The default UCT transports, posix and cma (which has no event to sleep on): the transport
        // takes every value, and the ping-pong runs
        String text = run("--transport", "ucx", "--tests", "am_lat", "-n", "2000", "-w", "100", "--completion",
                "implicit", "--busy-poll", "--no-progress");
        assertTrue(text.matches("(?s).*am_lat +ucx +8B +2000 +latency us: p50 .*"), text);
    }

    /**
     * UCT's tcp is accepted for the run only where --ucx-tls names it (its ifaces write what any
     * connected process's put names); and a run over it goes through.
     */
    @Test
    void namingUctTcpAcceptsItsUncheckedWritesForTheRun() {
        PerfCommand tcp = new PerfCommand();
        new CommandLine(tcp).parseArgs("--transport", "ucx", "--ucx-tls", "tcp", "--ucx-devices", "lo");
        assertEquals("accept", tcp.config(false).getString("fenceline.transport.ucx.tcp-unchecked-writes"));
        PerfCommand shm = new PerfCommand();
        new CommandLine(shm).parseArgs("--transport", "ucx");
        assertEquals("refuse", shm.config(false).getString("fenceline.transport.ucx.tcp-unchecked-writes"));
        org.junit.jupiter.api.Assumptions.assumeTrue(dev.fenceline.transport.ucx.UcxNative.isAvailable(),
                () -> "UCX: " + dev.fenceline.transport.ucx.UcxNative.unavailabilityCause());
        String text = run("--transport", "ucx", "--ucx-tls", "tcp", "--ucx-devices", "lo", "--tests", "put_lat", "-n",
                "500", "-w", "50", "--no-progress");
        assertTrue(text.matches("(?s).*put_lat +ucx +8B +500 +latency us: p50 .*"), text);
    }

    /** put_lat over tcp with the pinger and responder running their workers' I/O: every ping answered. */
    @Test
    void callerProgressPutLatencyOverTcp() {
        String text = run("--transport", "tcp", "--tests", "put_lat", "-n", "2000", "-w", "100", "--caller-progress",
                "--no-progress");
        assertTrue(text.matches("(?s).*put_lat +tcp +8B +2000 +latency us: p50 .*"), text);
        StringWriter err = new StringWriter();
        CommandLine cl = new CommandLine(new PerfCommand());
        cl.setErr(new PrintWriter(err));
        assertEquals(2, cl.execute("--transport", "tcp", "--tests", "fadd_lat", "--caller-progress"));
        assertTrue(err.toString().contains("--caller-progress is put_lat's"), err.toString());
    }

    /** Spinning event loops and put_lat's two polling threads need a CPU each, or every put takes milliseconds. */
    @Test
    void busyPollingIsRefusedWhereItsThreadsWouldShareCpus() {
        String loops = "event loop(s)";
        assertEquals(null, PerfConfig.busyPollCrowded(2, 1, loops, false, 2), "two workers' event loops on two CPUs");
        assertEquals(null, PerfConfig.busyPollCrowded(2, 1, loops, true, 4));
        assertEquals(null, PerfConfig.busyPollCrowded(1, 2, loops, false, 2), "--server: one worker, two loops");
        String why = PerfConfig.busyPollCrowded(2, 1, loops, true, 2);
        assertTrue(why != null && why.contains("4 threads would spin here (2 event loop(s), put_lat's pinger")
                && why.contains("on 2 CPU(s)"), String.valueOf(why));
        assertTrue(PerfConfig.busyPollCrowded(2, 2, loops, false, 2) != null, "two workers of two event loops each");
        String ucx = PerfConfig.busyPollCrowded(2, 1, "progress thread(s)", true, 3);
        assertTrue(ucx != null && ucx.contains("(2 progress thread(s), put_lat's"), String.valueOf(ucx));
        if (Runtime.getRuntime().availableProcessors() < 4) { // this machine is such a one: refused before any run
            StringWriter err = new StringWriter();
            CommandLine cl = new CommandLine(new PerfCommand());
            cl.setErr(new PrintWriter(err));
            assertEquals(2, cl.execute("--transport", "tcp", "--tests", "put_lat", "--busy-poll", "--no-progress"));
            assertTrue(err.toString().contains("would spin"), err.toString());
            StringWriter ucxErr = new StringWriter();
            CommandLine ucxCl = new CommandLine(new PerfCommand());
            ucxCl.setErr(new PrintWriter(ucxErr));
            assertEquals(2, ucxCl.execute("--transport", "ucx", "--tests", "put_lat", "--busy-poll", "--no-progress"));
            assertTrue(ucxErr.toString().contains("progress thread(s)") && ucxErr.toString().contains("would spin"),
                    ucxErr.toString());
        }
    }

    /**
     * Progress CPUs are ucx's (its progress threads) and shm's (its polling threads): this process's,
     * and with a forked target the target's.
     */
    @Test
    void progressCpusAreUcxsAndShmsOneOrTwo() {
        int cpu = dev.fenceline.affinity.CpuAffinity.ofProcess().nextSetBit(0);
        StringWriter out = new StringWriter();
        CommandLine ok = new CommandLine(new PerfCommand());
        ok.setOut(new PrintWriter(out));
        assertEquals(0, ok.execute("--transport", "shm", "--progress-cpus", Integer.toString(cpu), "-t", "put_lat",
                "-s", "8", "-n", "2000", "-w", "200", "--no-progress"), out.toString());
        for (String[] bad : new String[][] {{"--transport", "tcp", "--progress-cpus", "0"},
                {"--transport", "sim", "--progress-cpus", "0"},
                {"--transport", "ucx", "--progress-cpus", "0,1,0", "--processes", "2"},
                {"--transport", "shm", "--progress-cpus", "0,1"}, // two, but no target process
                {"--transport", "ucx", "--progress-cpus", "0,1"}}) {
            StringWriter err = new StringWriter();
            CommandLine cl = new CommandLine(new PerfCommand());
            cl.setErr(new PrintWriter(err));
            assertEquals(2, cl.execute(bad), String.join(" ", bad));
            assertTrue(err.toString().contains("--progress-cpus"), err.toString());
        }
    }

    @Test
    void badArgumentsAreUsageErrors() {
        StringWriter err = new StringWriter();
        CommandLine cl = new CommandLine(new PerfCommand());
        cl.setErr(new PrintWriter(err));
        assertEquals(2, cl.execute("--tests", "warp_speed"));
        assertTrue(err.toString().contains("unknown test 'warp_speed'"), err.toString());
        StringWriter err2 = new StringWriter();
        CommandLine cl2 = new CommandLine(new PerfCommand());
        cl2.setErr(new PrintWriter(err2));
        assertEquals(2, cl2.execute("--transport", "sim", "--connect", "127.0.0.1"));
        assertTrue(err2.toString().contains("--server and --connect run tcp or shm"), err2.toString());
        for (String[] bad : new String[][] {{"-n", "0", "--iterations 0: expected 1 to"}, {"--window", "0", "--window 0:"
                + " expected 1 to 1048576"}, {"-w", "-1", "--warmup -1: expected 0 to"}, {"--max-bytes", "0",
                "--max-bytes 0: expected 1 to"}, {"--tests", "put_lat", "--sizes", "4"}, {"--tests", "put_lat",
                "--processes", "2"}}) {
            StringWriter e = new StringWriter();
            CommandLine c = new CommandLine(new PerfCommand());
            c.setErr(new PrintWriter(e));
            String[] args = bad.length == 3 ? new String[] {"--transport", "sim", bad[0], bad[1]}
                    : new String[] {"--transport", "shm", bad[0], bad[1], bad[2], bad[3]};
            assertEquals(2, c.execute(args), String.join(" ", bad));
            String expected = bad.length == 3 ? bad[2] : bad[2].equals("--sizes")
                    ? "put_lat needs messages of at least 8 bytes" : "put_lat runs in one process";
            assertTrue(e.toString().contains(expected), e.toString());
        }
    }

    /**
     * A row whose operations fail is not measured, and the run says so in its exit code: here active
     * messages larger than an shm lane carries, beside a row that runs.
     */
    @Test
    void aTestWhoseOperationsFailFailsTheRun() {
        StringWriter err = new StringWriter();
        PrintStream savedErr = System.err;
        PrintStream savedOut = System.out;
        ByteArrayOutputStream errBytes = new ByteArrayOutputStream();
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        int code;
        try {
            System.setErr(new PrintStream(errBytes, true, StandardCharsets.UTF_8));
            System.setOut(new PrintStream(out, true, StandardCharsets.UTF_8));
            CommandLine c = new CommandLine(new PerfCommand());
            c.setErr(new PrintWriter(err));
            code = c.execute("--transport", "shm", "--tests", "am_lat,get_lat", "--sizes", "64M", "-n", "3", "-w",
                    "1", "--json");
        } finally {
            System.setErr(savedErr);
            System.setOut(savedOut);
        }
        String stderr = errBytes.toString(StandardCharsets.UTF_8);
        assertEquals(PerfCommand.NOT_MEASURED, code, stderr + err);
        assertTrue(stderr.contains("am_lat 64MiB: not measured"), stderr);
        assertTrue(stderr.contains("1 not measured, their operations failed: am_lat 64MiB"), stderr);
        assertTrue(out.toString(StandardCharsets.UTF_8).contains("\"test\":\"get_lat\""), out.toString());
    }

    /**
     * Tests that share the target's word do not mislead each other: fetch-adds leave it ahead of
     * the put ping-pong's flag (an offset-0 word at 8 bytes), and compare-and-swaps follow a
     * warm-up and a swap that left it elsewhere; each checks the word at the end.
     */
    @Test
    void testsSharingTheTargetsWordEachMeasureTheirOwnOperations() {
        String json = run("--transport", "sim", "--tests", "fadd_lat,put_lat,swap_lat,cswap_lat,add_mr,fadd_mr",
                "--sizes", "8", "-n", "300", "-w", "30", "--json");
        for (String t : new String[] {"fadd_lat", "put_lat", "swap_lat", "cswap_lat", "add_mr", "fadd_mr"}) {
            assertTrue(json.contains("\"test\":\"" + t + "\""), t + " missing in " + json);
        }
    }
}
