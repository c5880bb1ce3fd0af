package dev.fenceline.transport.sim;

import com.typesafe.config.Config;
import com.typesafe.config.ConfigException;
import dev.fenceline.ConfigurationException;
import dev.fenceline.LaneType;
import dev.fenceline.spi.support.ConfigReader;
import java.time.Duration;
import java.util.ArrayList;
import java.util.EnumSet;
import java.util.List;
import java.util.Set;

/**
 * {@code fenceline.transport.sim}, read and validated once.
 *
 * @param seed seeds every lane's delay sequence
 * @param lanes the lanes each endpoint gets
 * @param maxFragment the largest single operation
 * @param queueDepth operations a lane holds undelivered before it answers NO_RESOURCE
 * @param deterministic deliver on a deterministic simulation's virtual time instead of a thread
 * @param directAccess lanes take the endpoint's fast path by grant (the calling thread applies)
 * @param connectTimeout how long a connect to a partitioned peer waits for the partition to heal
 * @param keysRead every key read, for the completeness test
 */
public record SimSettings(long seed, List<SimLaneSpec> lanes, int maxFragment, int queueDepth,
        boolean deterministic, boolean directAccess, java.time.Duration connectTimeout, Set<String> keysRead) {
    private static final String SECTION = "fenceline.transport.sim";

    /**
     * @param root the whole configuration
     * @return the settings
     */
    public static SimSettings fromConfig(Config root) {
        return read(new ConfigReader(root, SECTION));
    }

    /**
     * @param section the transport's own section (what {@code TransportContext.config()} holds)
     * @return the settings
     */
    public static SimSettings fromSection(Config section) {
        return read(new ConfigReader(section.atPath(SECTION), SECTION));
    }

    private static SimSettings read(ConfigReader r) {
        long seed = r.longValue("seed");
        List<? extends Config> raw = r.configList("lanes");
        if (raw.isEmpty() || raw.size() > 64) {
            throw r.invalid("lanes", raw.size() + " lanes", "1 to 64 lanes");
        }
        List<SimLaneSpec> lanes = new ArrayList<>();
        for (int i = 0; i < raw.size(); i++) {
            lanes.add(lane(raw.get(i), SECTION + ".lanes[" + i + "]"));
        }
        int maxFragment = (int) r.bytesIn("max-fragment", 64, 1 << 30);
        int queueDepth = r.intIn("queue-depth", 1, 1 << 20);
        boolean deterministic = r.bool("deterministic");
        boolean directAccess = r.bool("direct-access");
        java.time.Duration connectTimeout = r.durationIn("connect-timeout", java.time.Duration.ofMillis(1),
                java.time.Duration.ofMinutes(10));
        return new SimSettings(seed, List.copyOf(lanes), maxFragment, queueDepth, deterministic,
                directAccess, connectTimeout, r.keysRead());
    }

    /** The keys a lane entry may have (list elements are not checked against reference.conf). */
    private static final Set<String> LANE_KEYS = Set.of("types", "min-delay", "max-delay", "protocol", "revocable");

    private static SimLaneSpec lane(Config c, String where) {
        for (String k : c.root().keySet()) {
            if (!LANE_KEYS.contains(k)) {
                throw new ConfigurationException(where + "." + k + " is not a lane setting: expected " + new java.util
                        .TreeSet<>(LANE_KEYS));
            }
        }
        try {
            Set<LaneType> types = EnumSet.noneOf(LaneType.class);
            for (String t : c.getStringList("types")) {
                try {
                    types.add(LaneType.valueOf(t.trim().toUpperCase(java.util.Locale.ROOT)));
                } catch (IllegalArgumentException e) {
                    throw new ConfigurationException(where + ".types contains '" + t + "': expected one of "
                            + List.of(LaneType.values()));
                }
            }
            if (types.isEmpty()) {
                throw new ConfigurationException(where + ".types is empty: a lane needs at least one type");
            }
            Duration min = c.getDuration("min-delay");
            Duration max = c.getDuration("max-delay");
            if (min.isNegative() || max.compareTo(min) < 0 || max.compareTo(Duration.ofSeconds(10)) > 0) {
                throw new ConfigurationException(where + " delays [" + min + ", " + max
                        + "] are invalid: expected 0 <= min-delay <= max-delay <= 10s");
            }
            // Optional per lane (list elements have no reference.conf defaults): software protocol.
            String protocol = c.hasPath("protocol") ? c.getString("protocol").trim().toLowerCase(java.util.Locale.ROOT)
                    : "sw";
            if (!protocol.equals("sw") && !protocol.equals("hw")) {
                throw new ConfigurationException(where + ".protocol = " + protocol + " is invalid: expected sw or hw");
            }
            boolean revocable = !c.hasPath("revocable") || c.getBoolean("revocable");
            return new SimLaneSpec(types, min, max, protocol.equals("sw"), revocable);
        } catch (ConfigException e) {
            throw new ConfigurationException(where + " is invalid: " + e.getMessage(), e);
        }
    }
}
