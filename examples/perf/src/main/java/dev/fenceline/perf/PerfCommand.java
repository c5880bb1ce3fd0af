package dev.fenceline.perf;

import com.typesafe.config.Config;
import com.typesafe.config.ConfigFactory;
import io.netty.util.ResourceLeakDetector;
import java.io.PrintStream;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.Callable;
import java.util.function.LongConsumer;
import me.tongfei.progressbar.ConsoleProgressBarConsumer;
import me.tongfei.progressbar.ProgressBar;
import me.tongfei.progressbar.ProgressBarBuilder;
import me.tongfei.progressbar.ProgressBarStyle;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

/** {@code fenceline perf}: latency, bandwidth and rate tests modelled on ucx_perftest. */
@Command(name = "perf", mixinStandardHelpOptions = true,
        description = "Measures Fenceline between two workers in this JVM over a transport, in the manner of"
                + " ucx_perftest: latencies as HdrHistogram percentiles (ping-pong tests report half the round"
                + " trip), streams as MB/s and messages/s with per-operation completion, ended by a fence, a"
                + " sentinel write and a flush. --baseline adds raw Netty over the same loopback, measured in the"
                + " same run.")
public final class PerfCommand implements Callable<Integer> {
    /** The control port of --server and --connect (next to ucx_perftest's 13337, not on it). */
    static final int DEFAULT_PORT = 13347;
    /** How long either side waits for the other during set-up. */
    static final int SETUP_TIMEOUT_MS = 120_000;

    @Spec
    CommandSpec spec;

    @Option(names = {"-t", "--tests"}, split = ",", defaultValue = "put_lat,fadd_lat,am_lat,put_bw",
            description = "Tests, comma-separated: put_lat, put_bw, get_lat, get_bw, add_mr, fadd_mr, fadd_lat, swap_lat,"
                    + " cswap_lat, am_lat, am_bw, fence_rate, flush_lat, or all (default ${DEFAULT-VALUE}).")
    List<String> tests;

    @Option(names = {"-s", "--sizes"}, split = ",", defaultValue = "8,64K,1M", converter = SizeConverter.class,
            description = "Message sizes in bytes, comma-separated; K (KiB) and M (MiB) suffixes allowed, up to 64M"
                    + " (default ${DEFAULT-VALUE}). Atomic tests always use 8.")
    List<Integer> sizes;

    @Option(names = {"-n", "--iterations"}, defaultValue = "20000",
            description = "Measured iterations per test and size; streams of large messages are capped at"
                    + " --max-bytes, latency tests of 1 MiB or more at 2000 (default ${DEFAULT-VALUE}).")
    int iterations;

    @Option(names = "--max-bytes", defaultValue = "1073741824",
            description = "Largest payload one stream test moves in its warm-up, and again in its measured run"
                    + " (default ${DEFAULT-VALUE}).")
    long maxBytes;

    @Option(names = {"-w", "--warmup"},
            description = "Warm-up iterations before each measurement, in four passes of the measured code (3/8,"
                    + " 3/8, 1/8 and 1/8 of them: from about 400000 on, a stream's loop is compiled before it is"
                    + " measured),"
                    + " as given even where fewer are measured;"
                    + " capped as -n is for large messages (default " + PerfCounts.DEFAULT_WARMUP + ", or the measured"
                    + " count if smaller).")
    Integer warmup;

    @Option(names = "--jit-settle-ms", defaultValue = "3000",
            description = "In each warm-up, after its second and its last pass, wait up to this long for the JIT"
                    + " compilers, this process's and (for the runtime's tests)"
                    + " the target process's, to go quiet for " + JitSettle.QUIET_MS + " ms (0: do not wait;"
                    + " default ${DEFAULT-VALUE}).")
    long jitSettleMs;

    @Option(names = "--window", defaultValue = "64",
            description = "Operations in flight in stream tests (default ${DEFAULT-VALUE}).")
    int window;

    @Option(names = {"-x", "--transport"}, defaultValue = "tcp",
            description = "sim, tcp, shm or ucx (default ${DEFAULT-VALUE}); tcp runs over loopback rails, shm"
                    + " through /dev/shm, ucx over the UCT transports --ucx-tls names (both workers in this JVM).")
    String transport;

    @Option(names = "--ucx-tls", split = ",", defaultValue = "posix,cma", paramLabel = "TL",
            description = "With -x ucx: the UCT transports (fenceline.transport.ucx.tls), for example posix,cma or"
                    + " tcp (default ${DEFAULT-VALUE}). Naming tcp by that name sets"
                    + " fenceline.transport.ucx.tcp-unchecked-writes = accept for the run (all or ^ lists are"
                    + " refused where they select it): while it runs, any process that reaches its UCT tcp ports"
                    + " can write its memory (docs/security.md).")
    List<String> ucxTls;

    @Option(names = "--ucx-devices", split = ",", defaultValue = "all", paramLabel = "DEVICE",
            description = "With -x ucx: the network devices (fenceline.transport.ucx.devices), for example lo"
                    + " (default ${DEFAULT-VALUE}).")
    List<String> ucxDevices;

    @Option(names = "--rails", defaultValue = "1",
            description = "tcp rails (loopback addresses 127.0.0.1 ... 127.0.0.N) (default ${DEFAULT-VALUE}).")
    int rails;

    @Option(names = "--fence-mode", description = "weak, strong or endpoint (default: from configuration).")
    String fenceMode;

    @Option(names = "--baseline", description = "Also measure the floor under the transport in the same run:"
            + " raw Netty over loopback (a byte stream and a ping-pong at each size; its event loops spin where"
            + " the run's threads do, with --busy-poll or --caller-progress, on two CPUs or more) for tcp; for"
            + " shm a memcpy between direct buffers and a ping-pong of two threads through memory at each size,"
            + " and fetch-adds on a word of memory.")
    boolean baseline;

    @Option(names = "--processes", defaultValue = "1", description = "1: both workers in this JVM; 2: the target"
            + " worker in a second JVM on this host (tcp or shm; put_lat needs 1). Default ${DEFAULT-VALUE}.")
    int processes;

    @Option(names = "--completion", defaultValue = "per-op", description = "per-op (a future per operation),"
            + " implicit (put_bw, add_mr and am_bw without futures, completed by a flush every --window"
            + " operations; am_lat sends each ping from the pong's handler) or chained (get_lat, fadd_lat,"
            + " swap_lat, cswap_lat and flush_lat issue each operation from the previous one's completion)."
            + " Default ${DEFAULT-VALUE}.")
    String completion;

    @Option(names = "--server", arity = "0..1", fallbackValue = "127.0.0.1:" + DEFAULT_PORT, paramLabel = "HOST:PORT",
            description = "Be the target side of a run across hosts (like ucx_perftest without a peer): take one"
                    + " driver's control connection on HOST:PORT (default 127.0.0.1:" + DEFAULT_PORT + "; give an"
                    + " address other hosts reach, or 0.0.0.0), serve its run, then exit. Transport options must"
                    + " match the driver's; tcp needs --tcp-listen and the shared secret in FENCELINE_TCP_SECRET on"
                    + " both sides.")
    String server;

    @Option(names = "--connect", paramLabel = "HOST[:PORT]",
            description = "Drive a run against a `fenceline perf --server` (port " + DEFAULT_PORT + " unless"
                    + " given); the tests run as with --processes 2.")
    String connect;

    @Option(names = "--tcp-listen", split = ",", paramLabel = "HOST:PORT",
            description = "Addresses this side's tcp worker listens on, one per rail (default: loopback rails"
                    + " 127.0.0.1:0 ... 127.0.0.N:0). Across hosts, give addresses the other host reaches.")
    List<String> tcpListen;

    @Option(names = "--tls", description = "tcp with mutual TLS (security = tls) under throwaway certificates"
            + " from a test CA, in one host; across hosts, set fenceline.transport.tcp.tls in the configuration.")
    boolean tls;

    @Option(names = "--busy-poll", description = "tcp: the event loops spin instead of sleeping in epoll_wait"
            + " (fenceline.transport.tcp.busy-poll = on); ucx: the progress threads poll UCT without yielding"
            + " (" + PerfConfig.UCX_BUSY_POLL + "); as ucx_perftest's thread spins on"
            + " its worker. Each spinning thread keeps a CPU busy, so only where each has one: refused where they"
            + " and put_lat's two polling threads would outnumber this process's CPUs (on two, each put took"
            + " milliseconds).")
    boolean busyPoll;

    @Option(names = "--caller-progress", description = "put_lat: the pinger and the responder run their worker's"
            + " I/O themselves between their looks at the memory (Worker.progressHere()), as ucx_perftest's loop"
            + " progresses its worker: tcp's event loops, and shm's and ucx's progress agents, are lent to them for"
            + " the run.")
    boolean callerProgress;

    @Option(names = "--progress-cpus", split = ",", paramLabel = "CPU",
            description = "ucx and shm: the CPU this process's progress (ucx) or polling (shm) threads are kept to"
                    + " (with --processes 1, both workers'), then, with --processes 2, the target process's, unpinned"
                    + " if not given (fenceline.transport.ucx.progress-cpus, fenceline.transport.shm.polling-cpus);"
                    + " two such threads that share a core wait for each other.")
    List<Integer> progressCpus;

    @Option(names = "--endpoints", split = ",", paramLabel = "N",
            description = "Scale instead of the tests: N endpoints from one worker to one peer worker in this JVM"
                    + " (connect rate, heap retained per endpoint, a put and a flush over each, checked; idle CPU;"
                    + " close), for each N given.")
    List<Integer> endpointCounts;

    @Option(names = "--idle-seconds", defaultValue = "5",
            description = "With --endpoints: how long the endpoints sit idle while the process's CPU is measured.")
    double idleSeconds;

    @Option(names = "--idle-settle-seconds", defaultValue = "3",
            description = "With --endpoints: how long the endpoints sit idle before that (the JIT compilers and the"
                    + " collector finish with the connects meanwhile).")
    double idleSettleSeconds;

    @Option(names = "--netty-leak-detection", defaultValue = "disabled", paramLabel = "LEVEL",
            description = "Netty's buffer leak detection for the run, in this process and a forked target (disabled,"
                    + " simple, advanced or paranoid; default: ${DEFAULT-VALUE}, as ucx_perftest has none, unless the JVM"
                    + " sets io.netty.leakDetection.level itself, e.g. in FENCELINE_JAVA_OPTS). Netty's own"
                    + " default, simple, tracks one buffer in 128 with a stack trace: about 0.3 us more per tcp"
                    + " round trip here (docs/performance.md).")
    String nettyLeakDetection;

    @Option(names = "--json", description = "Print the results as a JSON array instead of text.")
    boolean json;

    @Option(names = "--no-progress", description = "No progress bar (it goes to stderr).")
    boolean noProgress;

    /** Runs with the Netty leak detection asked for, and gives this JVM its own back after. */
    @Override
    public Integer call() throws Exception {
        ResourceLeakDetector.Level leaks;
        try {
            leaks = NettyLeakDetection.parse(nettyLeakDetection);
        } catch (IllegalArgumentException e) {
            throw new CommandLine.ParameterException(spec.commandLine(), e.getMessage());
        }
        ResourceLeakDetector.Level before = ResourceLeakDetector.getLevel();
        try {
            NettyLeakDetection.apply(leaks, spec.commandLine().getParseResult().hasMatchedOption("--netty-leak-detection"));
            return measure();
        } finally {
            ResourceLeakDetector.setLevel(before);
        }
    }

    private Integer measure() throws Exception {
        List<PerfTest> selected = new ArrayList<>();
        boolean all = false;
        for (String t : tests) {
            if (t.trim().equalsIgnoreCase("all")) {
                all = true;
                selected.addAll(List.of(PerfTest.values()));
            } else {
                try {
                    selected.add(PerfTest.parse(t));
                } catch (IllegalArgumentException e) {
                    throw new CommandLine.ParameterException(spec.commandLine(), e.getMessage());
                }
            }
        }
        checkBounds();
        if ((all || !spec.commandLine().getParseResult().hasMatchedOption("--tests"))
                && (processes == 2 || connect != null)) {
            selected.remove(PerfTest.PUT_LAT); // 'all', or the default list: all of them that can run here
        }
        for (PerfTest t : selected) { // a test named that would measure nothing is a usage error, not an empty row
            if (!t.fixedSize() && sizes.stream().allMatch(n -> n < t.minSize)) {
                throw new CommandLine.ParameterException(spec.commandLine(), t.id() + " needs messages of at least "
                        + t.minSize + " bytes: --sizes " + sizes + " has none");
            }
            if (t == PerfTest.PUT_LAT && (processes == 2 || connect != null)) {
                throw new CommandLine.ParameterException(spec.commandLine(), "put_lat runs in one process (its"
                        + " responder polls the target's memory from the target's side): drop --processes 2 and"
                        + " --connect, or the test");
            }
        }
        List<Integer> sizeList = List.copyOf(sizes);
        List<String> notMeasured = new ArrayList<>();
        int largest = sizeList.stream().mapToInt(Integer::intValue).max().orElse(8);
        PrintStream out = System.out;
        List<PerfResult> results = new ArrayList<>();
        if (processes != 1 && (processes != 2 || transport.equals("sim"))) {
            throw new CommandLine.ParameterException(spec.commandLine(), "--processes " + processes + " with "
                    + transport + ": expected 1, or 2 with tcp, shm or ucx");
        }
        if ((server != null || connect != null) && (transport.equals("sim") || processes != 1)) {
            throw new CommandLine.ParameterException(spec.commandLine(), "--server and --connect run tcp or shm"
                    + " between two processes by themselves: drop --processes, and use -x tcp or -x shm");
        }
        if (server != null && connect != null) {
            throw new CommandLine.ParameterException(spec.commandLine(), "--server and --connect: one side each");
        }
        if (callerProgress && !selected.contains(PerfTest.PUT_LAT)) {
            throw new CommandLine.ParameterException(spec.commandLine(), "--caller-progress is put_lat's (its"
                    + " pinger and responder); the tests selected are " + selected);
        }
        Config config = config(selected.contains(PerfTest.PUT_LAT));
        if (endpointCounts != null && !endpointCounts.isEmpty()) {
            return scale(config, out);
        }
        if (server != null) {
            return serve(config, PerfPeers.hostPort(spec.commandLine(), server, "--server", true));
        }
        int regionBytes = Math.max(largest, 64);
        try (PerfSession session = connect != null ? new PerfSession(config, regionBytes,
                PerfPeers.dial(PerfPeers.hostPort(spec.commandLine(), connect, "--connect", false), transport))
                : processes == 2 ? new PerfSession(config, regionBytes, PerfPeers.fork(targetConfig(config)))
                        : new PerfSession(config, regionBytes)) {
            PerfRunner.Completion mode = switch (completion) {
                case "per-op" -> PerfRunner.Completion.PER_OP;
                case "implicit" -> PerfRunner.Completion.IMPLICIT;
                case "chained" -> PerfRunner.Completion.CHAINED;
                default -> throw new CommandLine.ParameterException(spec.commandLine(), "--completion " + completion
                        + ": expected per-op, implicit or chained");
            };
            PerfRunner runner = new PerfRunner(session, window, mode, jitSettleMs, callerProgress);
            if (!json) {
                out.printf(Locale.ROOT, "fenceline perf: transport %s, fence mode %s, lanes %d, window %d, %s, %s"
                        + " completion, Netty leak detection %s%s%n", session.transport,
                        session.fenceline.fenceMode(), session.toBeta.lanes().size(), window,
                        session.remote() ? "two processes" : "one process", completion, NettyLeakDetection.now(),
                        transport.equals("tcp") ? ", TCP congestion control " + TcpCongestion.shown(config) : "");
            }
            // The tcp transport's lanes run under the configured congestion control or the kernel's.
            String rowsCongestion = transport.equals("tcp")
                    ? TcpCongestion.effective(TcpCongestion.forBaseline(config, transport)) : null;
            for (PerfTest t : selected) {
                for (int size : t.fixedSize() ? List.of(8) : sizeList) {
                    if (size < t.minSize) {
                        continue;
                    }
                    int n = counts().measured(t, size);
                    int w = counts().warmups(t, size);
                    PerfResult r;
                    try (ProgressBar bar = bar(t.id() + " " + size(size), n)) {
                        r = runner.run(t, size, w, n, progress(bar)).withWarmup(w);
                    } catch (java.util.concurrent.ExecutionException | IllegalStateException e) {
                        // An operation failed (an active message over its lane's limit, say), or a
                        // check of what the row did at the target: say so, go on with the other
                        // rows, and fail the run at the end.
                        System.err.printf(Locale.ROOT, "%s %s: not measured: %s%n", t.id(), size(size),
                                e instanceof java.util.concurrent.ExecutionException ? e.getCause() : e);
                        notMeasured.add(t.id() + " " + size(size));
                        continue;
                    }
                    results.add(rowsCongestion == null ? r : r.withTcpCongestionControl(rowsCongestion));
                    if (!json) {
                        out.println(r.text());
                    }
                }
            }
        }
        if (baseline) {
            // Against threads that spin, the floor spins too: a sleeping loop measures how fast an idle CPU
            // wakes. Its two loops spin only where each can have a CPU, as --busy-poll's threads must.
            boolean spin = (busyPoll || callerProgress) && Runtime.getRuntime().availableProcessors() >= 2;
            Baselines.measure(transport, TcpCongestion.forBaseline(config, transport), spin, sizeList, counts(),
                    this::settle, this::bar, r -> {
                        results.add(r);
                        print(results, out);
                    });
        }
        if (json) {
            out.println("[");
            for (int i = 0; i < results.size(); i++) {
                out.println("  " + results.get(i).json() + (i + 1 < results.size() ? "," : ""));
            }
            out.println("]");
        }
        if (!notMeasured.isEmpty()) {
            System.err.println("fenceline perf: " + notMeasured.size() + " not measured, their operations failed: "
                    + String.join(", ", notMeasured));
            return NOT_MEASURED;
        }
        return 0;
    }

    /** The exit code of a run in which some test failed (the others' rows are still printed). */
    static final int NOT_MEASURED = 1;

    private int scale(Config config, PrintStream out) throws Exception {
        if (server != null || connect != null || processes != 1) {
            throw new CommandLine.ParameterException(spec.commandLine(), "--endpoints runs both workers in this JVM:"
                    + " drop --server, --connect and --processes");
        }
        for (int n : endpointCounts) {
            if (n < 1 || n > 1_000_000) {
                throw new CommandLine.ParameterException(spec.commandLine(), "--endpoints " + n + ": 1 to 1000000");
            }
        }
        if (!(idleSeconds > 0 && idleSeconds <= 3600 && idleSettleSeconds >= 0 && idleSettleSeconds <= 3600)) {
            throw new CommandLine.ParameterException(spec.commandLine(), "--idle-seconds " + idleSeconds
                    + " and --idle-settle-seconds " + idleSettleSeconds + ": more than 0 and 0 or more, at most 3600");
        }
        Config scaled = config;
        if (transport.equals("tcp")) {
            // Every endpoint is a connection per rail from the one address of the peer worker in
            // this JVM: the hostile-peer bounds (4,096 in all, 1,024 per address) would refuse the
            // rest. The scale run is about the runtime, not those bounds: they are raised to fit.
            long most = Math.min(1 << 20, Math.max(4096L, 2L * rails * java.util.Collections.max(endpointCounts)));
            scaled = ConfigFactory.parseString("fenceline.transport.tcp.limits { connections = " + most
                    + ", connections-per-address = " + most + " }").withFallback(config);
        }
        EndpointScale.run(scaled, transport, endpointCounts, new EndpointScale.Idle(idleSettleSeconds, idleSeconds),
                json, out);
        return 0;
    }

    /** --server: one driver, one run, then exit (as ucx_perftest's server). */
    private int serve(Config config, java.net.InetSocketAddress at) throws Exception {
        try (java.net.ServerSocket listener = new java.net.ServerSocket()) {
            listener.bind(at, 1);
            // On the command's own writer (stdout unless a caller set another): port 0 binds a free
            // port, and whoever started the server reads which from this line.
            java.io.PrintWriter console = spec.commandLine().getOut();
            console.println("fenceline perf server: waiting for a driver on " + listener.getLocalSocketAddress());
            console.flush();
            try (java.net.Socket control = listener.accept()) {
                control.setTcpNoDelay(true);
                control.setSoTimeout(SETUP_TIMEOUT_MS);
                PrintStream out = new PrintStream(control.getOutputStream(), true,
                        java.nio.charset.StandardCharsets.US_ASCII);
                out.println(PerfTarget.GREETING + " " + transport);
                PerfTarget.serve(config, control.getInputStream(), out, () -> control.setSoTimeout(0));
                console.println("fenceline perf server: served " + control.getRemoteSocketAddress());
                console.flush();
            }
        }
        return 0;
    }

    private void print(List<PerfResult> results, PrintStream out) {
        if (!json) {
            out.println(results.get(results.size() - 1).text());
        }
    }

    /** The wait for this process's compilers between the passes of a baseline's warm-up. */
    private void settle() throws Exception {
        JitSettle.await(jitSettleMs, List.of(JitSettle.thisJvm()), JitSettle.REAL);
    }

    /** @return where a run's count goes: the bar, or nowhere (null) */
    static LongConsumer progress(ProgressBar bar) {
        return bar == null ? null : bar::stepTo;
    }

    /** @return the counts of -n, -w and --max-bytes */
    PerfCounts counts() {
        return new PerfCounts(iterations, warmup, maxBytes);
    }

    /** @return a progress bar on stderr for a run, or null where none is shown */
    private ProgressBar bar(String task, long max) {
        if (noProgress || json) {
            return null;
        }
        return new ProgressBarBuilder().setTaskName(task).setInitialMax(max).setStyle(ProgressBarStyle.ASCII)
                .setConsumer(new ConsoleProgressBarConsumer(System.err)).setUpdateIntervalMillis(200)
                .clearDisplayOnFinish().build();
    }

    /** Counts and windows in their bounds, or a usage error naming the option and its bound. */
    private void checkBounds() {
        bound("--iterations", iterations, 1, Integer.MAX_VALUE);
        if (warmup != null) {
            bound("--warmup", warmup, 0, Integer.MAX_VALUE);
        }
        bound("--window", window, 1, 1 << 20);
        bound("--max-bytes", maxBytes, 1, Long.MAX_VALUE);
        bound("--jit-settle-ms", jitSettleMs, 0, 3_600_000);
    }

    private void bound(String option, long value, long least, long most) {
        if (value < least || value > most) {
            throw new CommandLine.ParameterException(spec.commandLine(), option + " " + value + ": expected "
                    + least + " to " + most);
        }
    }

    /** @param putLat whether put_lat runs (its pinger and responder poll memory) */
    Config config(boolean putLat) {
        Config c = PerfConfig.build(spec.commandLine(), new PerfConfig.Options(transport, fenceMode, ucxTls, ucxDevices,
                rails, tcpListen, server != null || connect != null, tls));
        rails = PerfConfig.rails(rails, tcpListen);
        if (busyPoll) {
            c = PerfConfig.busyPoll(spec.commandLine(), c, transport, server == null && connect == null ? 2 : 1,
                    putLat && server == null);
        }
        if (progressCpus != null && !progressCpus.isEmpty()) {
            if (cpusSetting() == null || progressCpus.size() > (processes == 2 ? 2 : 1)) {
                throw new CommandLine.ParameterException(spec.commandLine(), "--progress-cpus " + progressCpus
                        + ": expected, for --transport ucx or shm, one CPU (this process's), or with --processes 2"
                        + " two (this process's, the target process's)");
            }
            c = c.withValue(cpusSetting(), com.typesafe.config.ConfigValueFactory.fromIterable(
                    List.of(progressCpus.get(0))));
        }
        return c;
    }

    /** @return the setting --progress-cpus sets for this transport, or null where it has none */
    private String cpusSetting() {
        return switch (transport) {
            case "ucx" -> "fenceline.transport.ucx.progress-cpus";
            case "shm" -> "fenceline.transport.shm.polling-cpus";
            default -> null;
        };
    }

    /** The forked target's configuration: this one, with its own progress CPU if --progress-cpus names two, else none. */
    private Config targetConfig(Config config) {
        if (progressCpus == null || progressCpus.isEmpty()) {
            return config;
        }
        if (progressCpus.size() < 2) {
            return config.withoutPath(cpusSetting());
        }
        return config.withValue(cpusSetting(), com.typesafe.config.ConfigValueFactory.fromIterable(
                List.of(progressCpus.get(1))));
    }

    static String size(int bytes) {
        if (bytes >= (1 << 20) && bytes % (1 << 20) == 0) {
            return (bytes >> 20) + "MiB";
        }
        if (bytes >= 1024 && bytes % 1024 == 0) {
            return (bytes >> 10) + "KiB";
        }
        return bytes + "B";
    }
}
