package dev.fenceline.examples.cluster;

import dev.fenceline.testkit.TestCertificates;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.OutputStreamWriter;
import java.io.PrintStream;
import java.io.PrintWriter;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * The cluster demo: starts the members of the replicated key-value store as separate JVMs (each a
 * Pekko Cluster member: on loopback, or each in a network namespace of its own with two veth
 * rails), runs their writes, kills the last member with SIGKILL mid-run, waits for the cluster to
 * remove it (the split-brain resolver downs it), and has the survivors verify every replica that
 * is left: nothing lost, nothing applied twice, every fence held, and every request to the dead
 * member ended with a truthful outcome ({@code EndpointFailedException} or
 * {@code OutcomeUnknownException}, never success after it died and never a hang).
 */
public final class ClusterDemo {
    private static final long STEP_S = 120;

    private ClusterDemo() {
    }

    /**
     * @param nodes how many members, at least 3 (a majority must survive the kill)
     * @param keysPerNode keys each member writes
     * @param writes writes each member issues (each to every replica)
     * @param config the members' configuration (config/cluster/three-nodes.conf)
     * @param netns each member in a network namespace of its own with two rails (needs root)
     * @param logs where the members' logs go
     * @param out where progress and the verdict are printed
     */
    public record Options(int nodes, int keysPerNode, int writes, Path config, boolean netns, Path logs,
            PrintStream out) {
        /**
         * Checks the bounds.
         *
         * @param nodes how many members
         * @param keysPerNode keys each member writes
         * @param writes writes each member issues
         * @param config the members' configuration
         * @param netns each member in a network namespace of its own
         * @param logs where the members' logs go
         * @param out where progress and the verdict are printed
         */
        public Options {
            if (nodes < 3 || nodes > 16) {
                throw new IllegalArgumentException("--nodes " + nodes + ": 3 to 16 (a majority survives one kill)");
            }
            if (keysPerNode < 1 || keysPerNode > 0xFFFF / nodes) { // not keysPerNode * nodes: it can overflow
                throw new IllegalArgumentException("--keys " + keysPerNode + ": 1 to " + 0xFFFF / nodes + " per node");
            }
            if (writes < 100) {
                throw new IllegalArgumentException("--writes " + writes + ": at least 100, so the kill falls mid-run");
            }
        }
    }

    /**
     * @param ok whether everything verified
     * @param problems what did not, if anything
     * @param removedAfterMs from the kill until every survivor saw the member's worker leave
     * @param toTheDead per survivor: requests to the dead member acknowledged, failed, unknown
     * @param checkedSlots replica slots the survivors checked
     */
    public record Report(boolean ok, List<String> problems, long removedAfterMs, List<long[]> toTheDead,
            int checkedSlots) {
    }

    /**
     * A member's process and its output lines; {@code gone} holds the GONE lines it printed while
     * something else was awaited (each survivor must see the member leave, not just one of them), and
     * {@code goneAt} when its output reader got each.
     */
    private record Member(int index, Process process, BlockingQueue<String> lines, PrintWriter in, Path log,
            List<String> gone, Map<String, Long> goneAt) {
        void send(String command) {
            in.println(command);
            in.flush();
        }

        /** @return the first line starting with {@code prefix}, skipping others (GONE lines kept in {@link #gone}) */
        String expect(String prefix) throws InterruptedException, IOException, TimeoutException {
            long until = System.nanoTime() + TimeUnit.SECONDS.toNanos(STEP_S);
            while (System.nanoTime() < until) {
                String line = lines.poll(100, TimeUnit.MILLISECONDS);
                if (line == null) {
                    if (!process.isAlive()) {
                        throw new IOException("member " + index + " exited (" + process.exitValue() + ") before '"
                                + prefix + "'; its log " + log + ":\n" + tail(log));
                    }
                    continue;
                }
                if (line.startsWith(prefix)) {
                    return line;
                }
                if (line.startsWith("GONE ")) {
                    gone.add(line);
                }
            }
            throw new TimeoutException("member " + index + " printed no '" + prefix + "' within " + STEP_S + " s; its log "
                    + log + ":\n" + tail(log));
        }
    }

    private static boolean stalledInPekko(Path log) throws IOException {
        try (java.util.stream.Stream<String> lines = Files.lines(log)) {
            return lines.anyMatch(l -> l.contains(KvNode.PEKKO_STALL));
        }
    }

    private static String tail(Path log) throws IOException {
        List<String> all = Files.readAllLines(log);
        return String.join("\n", all.subList(Math.max(0, all.size() - 200), all.size()));
    }

    /**
     * @param o the options
     * @return the verdict
     * @throws Exception if a member could not be started or stopped answering
     */
    public static Report run(Options o) throws Exception {
        Files.createDirectories(o.logs());
        Netns net = o.netns() ? Netns.create(o.nodes()) : null;
        List<Member> members = new ArrayList<>();
        try {
            String seedHost = net != null ? net.rail1(0) : InetAddress.getLoopbackAddress().getHostAddress();
            int seedPort = net != null ? 25520 : freePort();
            String seed = "pekko://kv@" + seedHost + ":" + seedPort;
            TestCertificates certs = needsCertificates(o.config()) ? certificates(o) : null;
            for (int i = 0; i < o.nodes(); i++) {
                members.add(start(o, net, i, i == 0 ? seedPort : 0, seed, certs));
            }
            for (Member m : members) {
                o.out().println("  " + m.expect("UP "));
            }
            for (Member m : members) {
                m.send("RUN " + o.writes());
            }
            Member victim = members.get(o.nodes() - 1);
            for (Member m : members) { // every member is a third of the way through: mid-run
                while (Long.parseLong(m.expect("PROGRESS ").substring(9)) < o.writes() / 3) {
                    // keep reading
                }
            }
            victim.process().destroyForcibly(); // SIGKILL
            long killed = System.nanoTime();
            o.out().println("  killed member " + victim.index() + " (SIGKILL) a third of the way through its writes");
            List<Member> survivors = members.subList(0, o.nodes() - 1);
            List<String> problems = new ArrayList<>();
            List<long[]> toTheDead = new ArrayList<>();
            for (Member m : survivors) {
                List<String> outcomes = new ArrayList<>();
                String line;
                while (!(line = m.expect("")).startsWith("WRITTEN")) {
                    if (line.startsWith("OUTCOME ")) {
                        outcomes.add(line);
                    } else if (line.startsWith("GONE ")) {
                        m.gone().add(line);
                    }
                }
                judgeOutcomes(o, m.index(), victim.index(), outcomes, problems, toTheDead);
            }
            long removedAfterMs = awaitGone(survivors, victim.index(), killed);
            o.out().println("  every survivor saw member " + victim.index() + " leave the cluster " + removedAfterMs
                    + " ms after the kill");
            int checked = 0;
            for (Member m : survivors) {
                m.send("VERIFY " + victim.index());
                String[] v = m.expect("VERIFIED ").split(" ", 4);
                checked += Integer.parseInt(v[2]);
                if (!v[1].equals("ok")) {
                    problems.add("member " + m.index() + ": " + v[3]);
                }
            }
            long quit = System.nanoTime();
            for (Member m : survivors) {
                m.send("QUIT");
            }
            // One deadline for all: each member bounds its own shutdown (KvNode.QUIT_WATCHDOG_S).
            long deadline = quit + TimeUnit.SECONDS.toNanos(KvNode.QUIT_WATCHDOG_S + 10);
            List<String> quitTimes = new ArrayList<>();
            for (Member m : survivors) {
                if (!m.process().waitFor(Math.max(0, deadline - System.nanoTime()), TimeUnit.NANOSECONDS)) {
                    problems.add("member " + m.index() + " did not quit within " + (KvNode.QUIT_WATCHDOG_S + 10)
                            + " s; its log " + m.log() + " ends:\n" + tail(m.log()));
                    continue;
                }
                quitTimes.add(m.index() + " in " + TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - quit) + " ms"
                        + (stalledInPekko(m.log()) ? " (its actor system stalled in Pekko's shutdown, none of"
                                + " Fenceline's actors left; its log " + m.log() + " lists what was)" : ""));
                if (m.process().exitValue() != 0) {
                    problems.add("member " + m.index() + " exited with " + m.process().exitValue() + " after QUIT;"
                            + " its log " + m.log() + " ends:\n" + tail(m.log()));
                }
            }
            o.out().println("  survivors quit: " + String.join(", ", quitTimes));
            return new Report(problems.isEmpty(), problems, removedAfterMs, toTheDead, checked);
        } catch (IOException | TimeoutException e) {
            StringBuilder logs = new StringBuilder(e.getMessage());
            for (Member m : members) { // the others may say why
                logs.append("\n--- member ").append(m.index()).append(m.process().isAlive() ? " (alive)" : " (exited "
                        + m.process().exitValue() + ")").append(", ").append(m.log()).append(":\n").append(tail(m.log()));
            }
            throw new IOException(logs.toString(), e);
        } finally {
            for (Member m : members) {
                m.process().destroyForcibly();
            }
            if (net != null) {
                net.close();
            }
        }
    }

    /**
     * A survivor's requests: to every survivor all acknowledged; to the dead member each one either
     * acknowledged before it died or ended with a truthful failure, and at least one failure (the
     * kill fell mid-run).
     */
    private static void judgeOutcomes(Options o, int survivor, int dead, List<String> outcomes, List<String> problems,
            List<long[]> toTheDead) {
        if (outcomes.size() != o.nodes()) {
            problems.add("member " + survivor + " reported " + outcomes.size() + " replicas, not " + o.nodes());
            return;
        }
        for (String line : outcomes) {
            String[] f = line.split(" ", 7);
            int replica = Integer.parseInt(f[1]);
            long acked = Long.parseLong(f[2]);
            long failed = Long.parseLong(f[3]);
            long unknown = Long.parseLong(f[4]);
            long other = Long.parseLong(f[5]);
            if (replica == dead) {
                toTheDead.add(new long[] {acked, failed, unknown});
                String first = f[6].length() > 200 ? f[6].substring(0, 200) + "..." : f[6];
                o.out().printf("  member %d -> dead member %d: %d writes acknowledged before the kill, then %d ended"
                        + " OutcomeUnknown and %d EndpointFailed (first: %s)%n", survivor, dead, acked, unknown, failed,
                        first);
                if (other != 0) {
                    problems.add("member " + survivor + ": " + other + " requests to the dead member ended with an"
                            + " error that is neither EndpointFailed nor OutcomeUnknown: " + f[6]);
                }
                if (failed + unknown == 0) {
                    problems.add("member " + survivor + ": no request to the dead member failed: it was not killed"
                            + " mid-run");
                }
            } else if (acked != o.writes() || failed + unknown + other != 0) {
                problems.add("member " + survivor + " -> member " + replica + " (alive): " + acked + " of " + o.writes()
                        + " writes acknowledged, " + (failed + unknown + other) + " failed: " + f[6]);
            }
        }
    }

    /** @return from the kill until the last survivor printed that the dead member left */
    private static long awaitGone(List<Member> survivors, int dead, long killed) throws Exception {
        long last = killed;
        for (Member m : survivors) {
            while (!m.gone().contains("GONE " + dead)) {
                m.gone().add(m.expect("GONE "));
            }
            last = Math.max(last, m.goneAt().get("GONE " + dead)); // read before it was queued
        }
        return TimeUnit.NANOSECONDS.toMillis(last - killed);
    }

    /** Whether the configuration runs tcp under mutual TLS without naming this member's key store. */
    private static boolean needsCertificates(Path config) {
        com.typesafe.config.Config c = com.typesafe.config.ConfigFactory.parseFile(config.toFile())
                .withFallback(com.typesafe.config.ConfigFactory.defaultReference()).resolve();
        return c.getString("fenceline.transport.tcp.security").equals("tls")
                && c.getString("fenceline.transport.tcp.tls.key-store").isEmpty()
                && c.getString("fenceline.transport.tcp.tls.certificate").isEmpty();
    }

    /** A throwaway CA and one certificate per member, beside the members' logs. */
    private static TestCertificates certificates(Options o) {
        String[] names = new String[o.nodes()];
        for (int i = 0; i < names.length; i++) {
            names[i] = "member-" + i;
        }
        TestCertificates certs = TestCertificates.create(o.logs().resolve("tls"), names);
        o.out().println("  mutual TLS: a throwaway CA and a certificate per member in " + o.logs().resolve("tls"));
        return certs;
    }

    private static Member start(Options o, Netns net, int index, int port, String seed, TestCertificates certs)
            throws IOException {
        Path log = o.logs().resolve("member-" + index + ".log");
        List<String> cmd = new ArrayList<>();
        if (net != null) {
            cmd.addAll(List.of("ip", "netns", "exec", net.namespace(index)));
        }
        cmd.addAll(List.of(Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                "--add-exports", "java.base/jdk.internal.misc=ALL-UNNAMED", "-Xmx384m", "-XX:+UseSerialGC",
                "-cp", System.getProperty("java.class.path"), KvNode.class.getName(),
                Integer.toString(index), Integer.toString(o.nodes()), Integer.toString(o.keysPerNode()),
                o.config().toString()));
        if (net != null) {
            cmd.addAll(List.of(net.rail1(index), Integer.toString(port == 0 ? 25520 : port), seed,
                    net.rail1(index) + ":0", net.rail2(index) + ":0"));
        } else {
            cmd.addAll(List.of("127.0.0.1", Integer.toString(port), seed, "127.0.0.1:0"));
        }
        ProcessBuilder pb = new ProcessBuilder(cmd).redirectError(log.toFile());
        if (certs != null) {
            // Paths and passwords through the environment, which the sample configuration reads.
            pb.environment().put("FENCELINE_TLS_KEY_STORE", certs.member("member-" + index).keyStore().toString());
            pb.environment().put("FENCELINE_TLS_TRUST_STORE", certs.trustStore().toString());
            pb.environment().put("FENCELINE_TLS_KEY_STORE_PASSWORD", certs.password());
            pb.environment().put("FENCELINE_TLS_TRUST_STORE_PASSWORD", certs.password());
        }
        Process p = pb.start();
        BlockingQueue<String> lines = new LinkedBlockingQueue<>();
        Map<String, Long> goneAt = new java.util.concurrent.ConcurrentHashMap<>();
        Thread reader = new Thread(() -> {
            try (BufferedReader r = new BufferedReader(new InputStreamReader(p.getInputStream(), StandardCharsets.UTF_8))) {
                String line;
                while ((line = r.readLine()) != null) {
                    if (line.startsWith("GONE ")) {
                        goneAt.putIfAbsent(line, System.nanoTime()); // when printed, not when the main thread read it
                    }
                    lines.add(line);
                }
            } catch (IOException e) {
                lines.add("ERROR reading member output: " + e);
            }
        }, "member-" + index + "-out");
        reader.setDaemon(true);
        reader.start();
        return new Member(index, p, lines, new PrintWriter(new OutputStreamWriter(p.getOutputStream(),
                StandardCharsets.UTF_8)), log, new ArrayList<>(), goneAt);
    }

    private static int freePort() throws IOException {
        try (ServerSocket s = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
            return s.getLocalPort();
        }
    }
}
