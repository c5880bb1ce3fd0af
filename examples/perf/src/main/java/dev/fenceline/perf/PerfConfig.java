package dev.fenceline.perf;

import com.typesafe.config.Config;
import com.typesafe.config.ConfigFactory;
import java.security.SecureRandom;
import java.util.HexFormat;
import java.util.List;
import picocli.CommandLine;

/**
 * The runtime configuration a perf run asks for, from its options: the transport and its rails,
 * devices and credentials (a throwaway secret or throwaway certificates within one host), over
 * what {@code application.conf} and the environment say.
 */
final class PerfConfig {
    /**
     * What the options say.
     *
     * @param transport sim, tcp, shm or ucx
     * @param fenceMode the fence mode, or null for the configuration's
     * @param ucxTls UCT transports
     * @param ucxDevices UCT devices
     * @param rails tcp rails over loopback
     * @param tcpListen tcp addresses to listen on, or null
     * @param acrossHosts whether the peer is another host's (--server or --connect)
     * @param tls whether tcp runs under throwaway certificates
     */
    record Options(String transport, String fenceMode, List<String> ucxTls, List<String> ucxDevices, int rails,
            List<String> tcpListen, boolean acrossHosts, boolean tls) {
    }

    private PerfConfig() {
    }

    /** @return the rails a run uses: one per --tcp-listen address, else --rails */
    static int rails(int rails, List<String> tcpListen) {
        return tcpListen != null && !tcpListen.isEmpty() ? tcpListen.size() : rails;
    }

    /**
     * @param cl the command, for errors that name the option
     * @param o what the options say
     * @return the runtime configuration the run asks for
     * @throws CommandLine.ParameterException an option out of its bounds, or a combination that cannot work
     */
    static Config build(CommandLine cl, Options o) {
        Config base = ConfigFactory.load();
        String fenceMode = o.fenceMode();
        String transport = o.transport();
        int rails = o.rails();
        List<String> tcpListen = o.tcpListen();
        boolean acrossHosts = o.acrossHosts();
        if (fenceMode != null) {
            base = ConfigFactory.parseString("fenceline.fence.mode = \"" + fenceMode + "\"").withFallback(base);
        }
        switch (transport) {
            case "sim":
                return ConfigFactory.parseString("fenceline.transports = [sim]").withFallback(base);
            case "shm":
                return ConfigFactory.parseString("fenceline.transports = [shm]").withFallback(base);
            case "ucx":
                return ConfigFactory.parseString("fenceline.transports = [ucx]\n"
                        + "fenceline.transport.ucx.tls = " + hoconList(o.ucxTls()) + "\n"
                        + "fenceline.transport.ucx.devices = " + hoconList(o.ucxDevices()) + "\n"
                        // named on the command line, so accepted for the run (see --ucx-tls)
                        + "fenceline.transport.ucx.tcp-unchecked-writes = "
                        + (o.ucxTls().contains("tcp") ? "accept" : "refuse")).withFallback(base);
            case "tcp": {
                if (rails < 1 || rails > 16) {
                    throw new CommandLine.ParameterException(cl, "--rails " + rails
                            + ": expected 1 to 16");
                }
                StringBuilder listen = new StringBuilder();
                if (tcpListen != null && !tcpListen.isEmpty()) {
                    if (tcpListen.size() > 16) {
                        throw new CommandLine.ParameterException(cl, "--tcp-listen: " + tcpListen.size()
                                + " addresses, at most 16 rails");
                    }
                    for (String a : tcpListen) {
                        listen.append(listen.length() == 0 ? "" : ", ").append('"').append(a.trim()).append('"');
                    }
                    rails = tcpListen.size();
                } else if (acrossHosts) {
                    throw new CommandLine.ParameterException(cl, "tcp between two hosts needs"
                            + " --tcp-listen with an address the other host reaches (loopback rails are the default"
                            + " in one host only)");
                } else {
                    for (int i = 1; i <= rails; i++) {
                        listen.append(i == 1 ? "" : ", ").append("\"127.0.0.").append(i).append(":0\"");
                    }
                }
                if (o.tls()) {
                    if (acrossHosts) {
                        throw new CommandLine.ParameterException(cl, "--tls makes throwaway"
                                + " certificates for one host; across hosts, configure fenceline.transport.tcp.tls");
                    }
                    return ConfigFactory.parseString("fenceline.transports = [tcp]\n"
                            + "fenceline.transport.tcp.listen = [" + listen + "]\n"
                            + "fenceline.transport.tcp.max-rails = " + rails).withFallback(throwawayTls())
                            .withFallback(base.withoutPath("fenceline.transport.tcp.secret")).resolve();
                }
                String secret = base.getString("fenceline.transport.tcp.secret");
                if (secret.isEmpty() && (acrossHosts)) {
                    throw new CommandLine.ParameterException(cl, "tcp between two hosts needs the"
                            + " same secret on both sides: set FENCELINE_TCP_SECRET (for example to the output of"
                            + " `openssl rand -hex 24`) for the server and the driver");
                }
                if (secret.isEmpty()) {
                    byte[] random = new byte[24];
                    new SecureRandom().nextBytes(random);
                    secret = HexFormat.of().formatHex(random); // both workers are in this JVM
                }
                return ConfigFactory.parseString("fenceline.transports = [tcp]\n"
                        + "fenceline.transport.tcp.listen = [" + listen + "]\n"
                        + "fenceline.transport.tcp.max-rails = " + rails + "\n"
                        + "fenceline.transport.tcp.secret = \"" + secret + "\"").withFallback(base);
            }
            default:
                throw new CommandLine.ParameterException(cl, "--transport " + transport
                        + ": expected sim, tcp, shm or ucx");
        }
    }

    /**
     * A ucx progress thread under {@code --busy-poll}: it polls without yielding, the most
     * {@code spin-passes} takes where every iface has an event to sleep on and the busy-spin strategy
     * where one has none (cma). It holds answers as a sleeping one does (its passes keep their
     * deadline): over UCT tcp the messages the other way carry them.
     */
    static final String UCX_BUSY_POLL = "fenceline.transport.ucx { spin-passes = 1000000, idle-strategy = busy-spin }";

    /**
     * {@code --busy-poll}'s settings over a configuration, where each spinning thread has a CPU.
     *
     * @param cl the command, for its usage errors
     * @param c the configuration
     * @param transport tcp or ucx (refused for others)
     * @param workers the workers on this machine
     * @param putLat whether put_lat runs here (its pinger and responder poll memory)
     * @return the configuration with them
     */
    static Config busyPoll(CommandLine cl, Config c, String transport, int workers, boolean putLat) {
        boolean tcp = transport.equals("tcp");
        if (!tcp && !transport.equals("ucx")) {
            throw new CommandLine.ParameterException(cl, "--busy-poll is tcp's (its event loops) and ucx's (its"
                    + " progress threads); not for --transport " + transport);
        }
        Config busy = ConfigFactory.parseString(tcp ? "fenceline.transport.tcp.busy-poll = on" : UCX_BUSY_POLL)
                .withFallback(c);
        // A ucx worker has one progress thread; a tcp worker as many event loops as io-threads.
        String crowded = busyPollCrowded(workers, tcp ? busy.getInt("fenceline.transport.tcp.io-threads") : 1,
                tcp ? "event loop(s)" : "progress thread(s)", putLat, Runtime.getRuntime().availableProcessors());
        if (crowded != null) {
            throw new CommandLine.ParameterException(cl, crowded);
        }
        return busy;
    }

    /**
     * Whether {@code --busy-poll} leaves a spinning thread on this machine without a CPU: then each
     * waits for the others' time slices, milliseconds an operation (put_lat in one process on two
     * CPUs: 7.5 ms a put, its 10,000 warm-up puts 75 s).
     *
     * @param workers the workers on this machine (both, in one process or two; one with --server or --connect)
     * @param spinnersPerWorker each worker's spinning threads (tcp: {@code io-threads} event loops; ucx: one
     *     progress thread)
     * @param what what they are, for the message
     * @param putLat whether put_lat runs here: its pinger and its responder poll memory
     * @param cpus the CPUs this process may use
     * @return why not, or null if each has a CPU
     */
    static String busyPollCrowded(int workers, int spinnersPerWorker, String what, boolean putLat, int cpus) {
        int loops = workers * spinnersPerWorker;
        int spinning = loops + (putLat ? 2 : 0);
        if (spinning <= cpus) {
            return null;
        }
        return "--busy-poll: " + spinning + " threads would spin here (" + loops + " " + what
                + (putLat ? ", put_lat's pinger and responder" : "") + ") on " + cpus + " CPU(s), each waiting for"
                + " the others' time slices (milliseconds an operation): drop --busy-poll, or put_lat, or run where"
                + " each has a CPU";
    }

    /** @return the names as a HOCON list of quoted strings */
    private static String hoconList(List<String> names) {
        StringBuilder b = new StringBuilder("[");
        for (String n : names) {
            b.append(b.length() == 1 ? "" : ", ").append(com.typesafe.config.ConfigUtil.quoteString(n.trim()));
        }
        return b.append(']').toString();
    }

    /** Certificates for both workers of this host, deleted when the JVM exits. */
    private static Config throwawayTls() {
        try {
            java.nio.file.Path dir = java.nio.file.Files.createTempDirectory("fenceline-perf-tls");
            Config c = dev.fenceline.testkit.TestCertificates.create(dir, "perf").tcpConfig("perf");
            Runtime.getRuntime().addShutdownHook(new Thread(() -> {
                try (var files = java.nio.file.Files.list(dir)) {
                    files.forEach(f -> f.toFile().delete());
                } catch (java.io.IOException ignored) {
                    // a temporary directory: best effort
                }
                dir.toFile().delete();
            }));
            return c;
        } catch (java.io.IOException e) {
            throw new java.io.UncheckedIOException(e);
        }
    }
}
