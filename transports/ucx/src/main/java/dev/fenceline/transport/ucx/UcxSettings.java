package dev.fenceline.transport.ucx;

import com.typesafe.config.Config;
import dev.fenceline.ConfigurationException;
import dev.fenceline.affinity.CpuAffinity;
import dev.fenceline.spi.support.ConfigReader;
import dev.fenceline.spi.support.ReconnectPolicy;
import java.time.Duration;
import com.typesafe.config.ConfigObject;
import com.typesafe.config.ConfigValue;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;

/**
 * {@code fenceline.transport.ucx}, read and validated once (reference.conf documents each key).
 *
 * @param tls the UCT transports and aliases, in order of preference
 * @param devices the network devices, or [all]
 * @param connectToEndpoint whether transports that can connect either way connect endpoint to endpoint
 * @param maxFragment the largest payload of one operation
 * @param nativeCopyFrom puts and gets through a peer's shared-memory segment on the calling thread of
 *     this many bytes and more, from or into a direct buffer, take the native copy;
 *     {@code Integer.MAX_VALUE}: none does ({@code native-copy = off})
 * @param queueDepth unanswered operations per lane
 * @param connectTimeout how long a connect may take
 * @param livenessInterval how often peer processes are checked, and greetings repeated
 * @param idleStrategy backoff, yield, busy-spin or sleep
 * @param idleParkMin the backoff strategy's shortest park
 * @param idleParkMax the backoff strategy's longest park, and the sleep strategy's park
 * @param spinPasses idle passes the progress thread spins before it yields and sleeps, or -1 for
 *     auto (see {@link #spinsFor})
 * @param maxRegistrations key-table slots
 * @param quarantine how long a closed region's memory and slot are kept
 * @param maxLanesPerPeer connection ids one peer may hold here
 * @param maxIncomingLanes connection ids all peers together may hold here
 * @param maxIncomingChannels UCT endpoints all peers' connects together may make this worker hold
 * @param assemblyTimeout how long a message arriving in parts may wait for its next part and keep
 *     its room when another message needs it
 * @param reconnect how a lane the endpoint gave up, but still wants, is reconnected
 * @param directOperations whether calling threads may post operations on a lane whose every
 *     operation is a software request (UCT's tcp), under the endpoint's grant
 * @param uctFlushAlways whether puts and atomic posts are answered after a UCT flush, and weak
 *     fences are UCT's, on every device, not only where completions are not in place
 *     ({@link UctIface#completesInPlace(UctResource)})
 * @param answerHold how long a target holds back the ACKs nobody waits for one by one, to send several
 *     together ({@link UcxHeldAnswers}); zero: each goes at once
 * @param progressCpus the CPUs the progress thread may run on ({@link CpuAffinity}); empty: the process's
 * @param uct UCT settings per UCT transport (names as {@code ucx_info -c} lists them without the
 *     {@code UCX_<TL>_} prefix), applied to this worker's ifaces of that transport
 * @param keysRead every key read, for the completeness test
 */
record UcxSettings(List<String> tls, List<String> devices, boolean connectToEndpoint, int maxFragment,
        int nativeCopyFrom, int queueDepth,
        Duration connectTimeout, Duration livenessInterval, String idleStrategy, Duration idleParkMin,
        Duration idleParkMax, int spinPasses, int maxRegistrations, Duration quarantine, int maxLanesPerPeer,
        int maxIncomingLanes, int maxIncomingChannels, Duration assemblyTimeout, ReconnectPolicy reconnect, boolean directOperations,
        boolean uctFlushAlways, Duration answerHold, List<Integer> progressCpus, Map<String, Map<String, String>> uct,
        Set<String> keysRead) {
    static final String SECTION = "fenceline.transport.ucx";

    static UcxSettings fromSection(Config section) {
        ConfigReader r = new ConfigReader(section.atPath(SECTION), SECTION);
        List<String> tls = List.copyOf(r.stringList("tls"));
        List<String> devices = List.copyOf(r.stringList("devices"));
        if (tls.isEmpty()) {
            throw r.invalid("tls", "[]", "at least one UCT transport or alias");
        }
        boolean tcpAccepted = r.oneOf("tcp-unchecked-writes", List.of("refuse", "accept")).equals("accept");
        if (!tcpAccepted && UctSelection.selectsTcp(tls, SECTION)) {
            throw new ConfigurationException(SECTION + ".tls = " + tls + " selects UCT's tcp, whose ifaces write"
                    + " any address of this process that a connected peer's put request names, with no key and"
                    + " unseen by this transport (UCT's tcp put protocol, served whatever this worker sends): leave"
                    + " tcp out (on an RDMA host, for example [rc_mlx5, ud_mlx5, posix, cma]; or [\"^tcp\"]), or set "
                    + SECTION + ".tcp-unchecked-writes = accept where every process that can reach this host's"
                    + " UCT tcp ports is trusted with this process's memory");
        }
        if (devices.isEmpty()) {
            throw r.invalid("devices", "[]", "at least one device, or [all]");
        }
        boolean toEndpoint = r.oneOf("connect", List.of("iface", "endpoint")).equals("endpoint");
        int maxFragment = (int) r.bytesIn("max-fragment", 1 << 10, 64 << 20);
        boolean nativeCopy = r.oneOf("native-copy", List.of("auto", "off")).equals("auto");
        int nativeFrom = (int) r.bytesIn("native-copy-from", 4 << 10, 1 << 30);
        int queueDepth = r.intIn("queue-depth", 1, 65536);
        Duration connect = r.durationIn("connect-timeout", Duration.ofMillis(1), Duration.ofMinutes(10));
        Duration liveness = r.durationIn("liveness-interval", Duration.ofMillis(1), Duration.ofMinutes(1));
        String idle = r.oneOf("idle-strategy", List.of("backoff", "yield", "busy-spin", "sleep"));
        Duration parkMin = r.durationIn("idle-park-min", Duration.ofNanos(1), Duration.ofMillis(1));
        Duration parkMax = r.durationIn("idle-park-max", parkMin, Duration.ofSeconds(1));
        int spins = spinPasses(r);
        int registrations = r.intIn("max-registrations", 1, KeyTable.MAX_SLOTS);
        Duration quarantine = r.durationIn("registration-quarantine", Duration.ofMillis(1), Duration.ofMinutes(10));
        int lanes = r.intIn("max-lanes-per-peer", 1, 1 << 20);
        int incoming = r.intIn("max-incoming-lanes", 1, 1 << 22);
        int incomingChannels = r.intIn("max-incoming-channels", 1, 1 << 20);
        Duration assemblyTimeout = r.durationIn("assembly-timeout", Duration.ofMillis(1), Duration.ofMinutes(10));
        Duration minBackoff = r.durationIn("reconnect.min-backoff", Duration.ofMillis(1), Duration.ofMinutes(10));
        Duration maxBackoff = r.durationIn("reconnect.max-backoff", minBackoff, Duration.ofMinutes(10));
        Duration giveUp = r.durationIn("reconnect.give-up-after", Duration.ofSeconds(1), Duration.ofDays(7));
        Duration stable = r.durationIn("reconnect.stable-after", Duration.ofMillis(1), Duration.ofHours(1));
        boolean directOperations = r.bool("direct-operations");
        boolean uctFlushAlways = r.oneOf("uct-flush", List.of("auto", "always")).equals("always");
        Duration answerHold = r.durationIn("answer-hold", Duration.ZERO, Duration.ofSeconds(1));
        List<Integer> cpus = CpuAffinity.cpusSetting(r, "progress-cpus");
        Map<String, Map<String, String>> uct = uct(r);
        return new UcxSettings(tls, devices, toEndpoint, maxFragment, nativeCopy ? nativeFrom : Integer.MAX_VALUE,
                queueDepth, connect, liveness, idle, parkMin,
                parkMax, spins, registrations, quarantine, lanes, incoming, incomingChannels, assemblyTimeout,
                new ReconnectPolicy(minBackoff, maxBackoff, giveUp, stable),
                directOperations, uctFlushAlways, answerHold, cpus, uct, r.keysRead());
    }

    /** {@code spin-passes}: auto (-1), or 0 to 1,000,000. */
    private static int spinPasses(ConfigReader r) {
        String v = r.config().hasPath("spin-passes") ? r.config().getValue("spin-passes").unwrapped().toString() : "";
        if (v.equals("auto")) {
            r.markRead("spin-passes");
            return -1;
        }
        try {
            int n = Integer.parseInt(v);
            if (n >= 0 && n <= 1_000_000) {
                r.markRead("spin-passes");
                return n;
            }
        } catch (NumberFormatException e) {
            // the same answer as out of bounds
        }
        throw r.invalid("spin-passes", v.isEmpty() ? "<unset>" : v, "auto, or an integer from 0 to 1000000");
    }

    /**
     * Idle passes to spin where the ifaces are these: the configured number, or for auto 100, except
     * where one iface is UCT's tcp, whose every pass is a system call: a spinning agent then takes a
     * core from the threads whose answers it waits for (on two cores a get over UCT tcp took 150 us
     * spinning, 53 yielding), so none.
     *
     * @param transports the UCT transports of the worker's ifaces
     * @return the passes
     */
    int spinsFor(List<String> transports) {
        if (spinPasses >= 0) {
            return spinPasses;
        }
        return transports.contains("tcp") ? 0 : 100;
    }

    /** {@code uct}: an object of UCT transports, each an object of UCT settings. */
    private static Map<String, Map<String, String>> uct(ConfigReader r) {
        ConfigValue section = r.config().hasPath("uct") ? r.config().getValue("uct") : null;
        if (!(section instanceof ConfigObject transports)) {
            throw r.invalid("uct", section == null ? "<unset>" : section.render(), "an object of UCT transports,"
                    + " each an object of UCT settings, e.g. uct { tcp { TX_SEG_SIZE = 64K } }");
        }
        Map<String, Map<String, String>> out = new TreeMap<>();
        for (Map.Entry<String, ConfigValue> t : transports.entrySet()) {
            if (!(t.getValue() instanceof ConfigObject settings)) {
                throw r.invalid("uct." + t.getKey(), t.getValue().render(), "an object of UCT settings (NAME = value)");
            }
            Map<String, String> m = new TreeMap<>();
            for (Map.Entry<String, ConfigValue> e : settings.entrySet()) {
                String key = "uct." + t.getKey() + "." + e.getKey();
                ConfigValue v = e.getValue();
                if (!e.getKey().matches("[A-Z][A-Z0-9_]*") || v instanceof ConfigObject
                        || v.valueType() == com.typesafe.config.ConfigValueType.LIST || v.unwrapped() == null) {
                    throw r.invalid(key, v.render(), "a UCT setting: its name as `ucx_info -c` lists it without the"
                            + " UCX_<TL>_ prefix (upper case), and a plain value");
                }
                m.put(e.getKey(), String.valueOf(v.unwrapped()));
                r.markRead(key);
            }
            out.put(t.getKey(), Map.copyOf(m));
        }
        return Map.copyOf(out);
    }
}
