package dev.fenceline.transport.ucx;

import dev.fenceline.ConfigurationException;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * Which of a host's UCT resources a worker opens, from two lists in the manner of UCX's
 * {@code UCX_TLS} and {@code UCX_NET_DEVICES}: transports by name or alias, in order of preference
 * ({@code sm} for every shared-memory transport, {@code rc}, {@code ud}, {@code dc}, {@code ib},
 * {@code all}), a leading {@code ^} to take all but those named; devices by name or {@code all},
 * applying to network devices only (shared memory and self have no device to choose). A pure
 * function of the host's resource list, so it is tested apart from UCX.
 *
 * <p>A name UCT does not know is a {@link ConfigurationException}: a typo must not quietly leave a
 * worker without its RDMA lanes. A known name this host lacks (rc_mlx5 on a host with no adapter) is
 * simply not selected.
 */
final class UctSelection {
    /** UCT 1.13's transports. */
    static final Set<String> KNOWN = Set.of("self", "tcp", "posix", "sysv", "xpmem", "knem", "cma", "rc_verbs",
            "rc_mlx5", "dc_mlx5", "ud_verbs", "ud_mlx5", "cuda_copy", "cuda_ipc", "gdr_copy", "rocm_copy", "rocm_ipc");

    /** Aliases, each in UCX's order. */
    static final Map<String, List<String>> ALIASES = Map.of(
            "sm", List.of("posix", "sysv", "xpmem", "knem", "cma"),
            "shm", List.of("posix", "sysv", "xpmem", "knem", "cma"),
            "rc", List.of("rc_mlx5", "rc_verbs"),
            "ud", List.of("ud_mlx5", "ud_verbs"),
            "dc", List.of("dc_mlx5"),
            "ib", List.of("rc_mlx5", "dc_mlx5", "ud_mlx5", "rc_verbs", "ud_verbs"),
            "all", List.of("self", "posix", "sysv", "xpmem", "knem", "cma", "rc_mlx5", "dc_mlx5", "ud_mlx5",
                    "rc_verbs", "ud_verbs", "tcp"));

    private UctSelection() {
    }

    /**
     * @param host the host's resources ({@link UcxNative#resources()})
     * @param tls transports and aliases, in order of preference, or all but some ({@code ^ud,tcp})
     * @param devices network devices by name, or {@code all}
     * @param key the configuration key the lists came from, for errors
     * @return the resources to open, by transport preference, then in the host's order
     * @throws ConfigurationException for a name UCT does not know, or an empty list
     */
    static List<UctResource> select(List<UctResource> host, List<String> tls, List<String> devices, String key) {
        if (tls.isEmpty() || devices.isEmpty()) {
            throw new ConfigurationException(key + ": the transport and device lists must each name something"
                    + " (all, to take everything)");
        }
        List<String> order = transports(tls, key);
        boolean allDevices = devices.size() == 1 && devices.get(0).equals("all");
        if (!allDevices && devices.contains("all")) {
            throw new ConfigurationException(key + ".devices: all stands alone, not beside " + devices);
        }
        List<UctResource> out = new ArrayList<>();
        for (String tl : order) {
            for (UctResource r : host) {
                if (r.transport().equals(tl) && (allDevices || !r.deviceType().equals("net")
                        || devices.contains(r.device()))) {
                    out.add(r);
                }
            }
        }
        return List.copyOf(out);
    }

    /**
     * @param tls transports and aliases, as {@link #select} takes them
     * @param key the configuration key the list came from, for errors
     * @return whether the list selects UCT's tcp, by name, through {@code all}, or as one of all but some
     * @throws ConfigurationException for a name UCT does not know
     */
    static boolean selectsTcp(List<String> tls, String key) {
        return !tls.isEmpty() && transports(tls, key).contains("tcp");
    }

    private static List<String> transports(List<String> tls, String key) {
        boolean exclude = tls.get(0).startsWith("^");
        Set<String> named = new LinkedHashSet<>();
        for (int i = 0; i < tls.size(); i++) {
            String t = i == 0 && exclude ? tls.get(0).substring(1) : tls.get(i);
            if (t.startsWith("^")) {
                throw new ConfigurationException(key + ".tls: ^ goes once, before the first name: " + tls);
            }
            List<String> expanded = ALIASES.get(t);
            if (expanded != null) {
                named.addAll(expanded);
            } else if (KNOWN.contains(t)) {
                named.add(t);
            } else {
                throw new ConfigurationException(key + ".tls: UCT has no transport '" + t + "' (transports: "
                        + new java.util.TreeSet<>(KNOWN) + "; aliases: " + new java.util.TreeSet<>(ALIASES.keySet())
                        + ")");
            }
        }
        if (!exclude) {
            return List.copyOf(named);
        }
        List<String> rest = new ArrayList<>(ALIASES.get("all"));
        rest.removeAll(named);
        return rest;
    }
}
