package dev.fenceline.testkit.process;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.function.Predicate;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * A rail-failover test's two {@link RailPeer} processes in their namespaces: the target started
 * in {@link Netns#b}, the origin in {@link Netns#a} streaming against it, and the origin's progress
 * lines read as they come. Both are killed with the namespaces.
 */
public final class RailOrigin {
    private static final Pattern PROGRESS = Pattern.compile("PROGRESS (\\d+) (\\d+) lanes=(.*)");
    private static final Pattern LANE = Pattern.compile("(\\d+):(up|down):(-?\\d+)");

    private final Process origin;
    private final Path logs;
    private final BlockingQueue<String> lines = new LinkedBlockingQueue<>();

    /**
     * One lane of the origin's endpoint as it last printed it.
     *
     * @param up whether it was live
     * @param connection its connection id (a new one after the lane is rebuilt)
     */
    public record Lane(boolean up, long connection) {
    }

    /**
     * A progress line of the origin.
     *
     * @param atMs milliseconds since it began streaming
     * @param iterations iterations completed
     * @param lanes its endpoint's lanes, by index
     */
    public record Progress(long atMs, long iterations, List<Lane> lanes) {
        /**
         * @param index a lane index
         * @return whether that lane is live (false if there is none)
         */
        public boolean up(int index) {
            return index < lanes.size() && lanes.get(index).up();
        }
    }

    private RailOrigin(Process origin, Path logs) {
        this.origin = origin;
        this.logs = logs;
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
        }, "rail-origin-stdout");
        pump.setDaemon(true);
        pump.start();
    }

    /**
     * Starts the target in namespace b and the origin in namespace a, both on {@code config}s.
     *
     * @param net the namespaces
     * @param logs where {@code target.log} and {@code origin.log} (their standard error) go
     * @param env environment variables for both (secrets)
     * @param targetConfig the target's configuration (HOCON)
     * @param originConfig the origin's configuration (HOCON)
     * @return the origin, streaming
     * @throws IOException if either cannot start, or the target prints no address
     */
    public static RailOrigin start(Netns net, Path logs, Map<String, String> env, String targetConfig,
            String originConfig) throws IOException {
        Files.createDirectories(logs);
        Map<String, String> t = new java.util.HashMap<>(env);
        t.put(RailPeer.CONFIG, targetConfig);
        Process target = net.start(net.b, logs.resolve("target.log"), t, RailPeer.command("target"));
        String address = expectLine(reader(target), "ADDRESS ", logs.resolve("target.log"));
        String[] parts = address.split(" ");
        Map<String, String> o = new java.util.HashMap<>(env);
        o.put(RailPeer.CONFIG, originConfig);
        Process origin = net.start(net.a, logs.resolve("origin.log"), o, RailPeer.command("origin", parts[1], parts[2],
                parts[3]));
        return new RailOrigin(origin, logs);
    }

    /**
     * As {@link #await}, but only lines printed from now on count: those already read and not yet
     * looked at (a loaded machine may leave several queued) are dropped first, so the progress
     * returned was taken after this call began, give or take the reader's lag.
     *
     * @param until what the progress must show
     * @param what for the failure message
     * @return the first fresh progress that shows it
     * @throws AssertionError after 30 s without it, or if the origin ended
     * @throws InterruptedException if interrupted
     * @throws IOException if its log cannot be read
     */
    public Progress awaitFresh(Predicate<Progress> until, String what) throws InterruptedException, IOException {
        for (String l; (l = lines.peek()) != null && !"EOF".equals(l);) {
            lines.poll(); // the end stays queued: await reports it
        }
        return await(until, what);
    }

    /**
     * Waits (at most 30 s) for a progress line that satisfies {@code until}.
     *
     * @param until the condition
     * @param what what is awaited, for the failure
     * @return the line that satisfied it
     * @throws AssertionError if none came in time, with the last one and the origin's log
     * @throws InterruptedException if interrupted
     * @throws IOException if the log cannot be read
     */
    public Progress await(Predicate<Progress> until, String what) throws InterruptedException, IOException {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
        Progress last = null;
        while (System.nanoTime() < deadline) {
            String l = lines.poll(1, TimeUnit.SECONDS);
            if ("EOF".equals(l)) {
                break;
            }
            Progress p = l == null ? null : parse(l);
            if (p != null) {
                last = p;
                if (until.test(p)) {
                    return p;
                }
            }
        }
        throw new AssertionError("timed out waiting for " + what + "; last " + last + "; origin log:\n"
                + tail(logs.resolve("origin.log")));
    }

    /**
     * Tells the origin to stop, and waits for its verdict.
     *
     * @return its RESULT line ({@code RESULT ok ...} when nothing was lost, doubled or out of order)
     * @throws AssertionError if it printed none, or did not exit with 0 after {@code RESULT ok}
     * @throws InterruptedException if interrupted
     * @throws IOException if stdin cannot be written
     */
    public String stop() throws InterruptedException, IOException {
        try (OutputStream in = origin.getOutputStream()) {
            in.write("STOP\n".getBytes(StandardCharsets.UTF_8));
        }
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
        while (System.nanoTime() < deadline) {
            String l = lines.poll(1, TimeUnit.SECONDS);
            if (l != null && l.startsWith("RESULT ")) {
                if (!origin.waitFor(30, TimeUnit.SECONDS)) {
                    throw new AssertionError("the origin did not exit after " + l);
                }
                if (l.startsWith("RESULT ok") && origin.exitValue() != 0) {
                    throw new AssertionError("the origin exited with " + origin.exitValue() + " after " + l);
                }
                return l;
            }
            if ("EOF".equals(l)) {
                break;
            }
        }
        throw new AssertionError("no RESULT from the origin; its log:\n" + tail(logs.resolve("origin.log")));
    }

    static Progress parse(String line) {
        Matcher m = PROGRESS.matcher(line);
        if (!m.matches()) {
            return null;
        }
        List<Lane> lanes = new ArrayList<>();
        for (String s : m.group(3).split(",")) {
            Matcher l = LANE.matcher(s);
            if (l.matches()) {
                lanes.add(new Lane(l.group(2).equals("up"), Long.parseLong(l.group(3))));
            }
        }
        return new Progress(Long.parseLong(m.group(1)), Long.parseLong(m.group(2)), List.copyOf(lanes));
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

    private static String tail(Path log) throws IOException {
        if (!Files.exists(log)) {
            return "(no log)";
        }
        List<String> all = Files.readAllLines(log, StandardCharsets.UTF_8);
        return String.join("\n", all.subList(Math.max(0, all.size() - 40), all.size()));
    }
}
