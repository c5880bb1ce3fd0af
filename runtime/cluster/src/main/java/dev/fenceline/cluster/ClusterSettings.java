package dev.fenceline.cluster;

import com.typesafe.config.Config;
import dev.fenceline.ConfigurationException;
import java.time.Duration;

/**
 * The {@code fenceline.cluster} section, read and checked once.
 *
 * @param askTimeout how long a question to another member's worker (its address, a region) may take
 * @param probeOnUnreachable whether an unreachable member's endpoints probe their lanes at once
 */
record ClusterSettings(Duration askTimeout, boolean probeOnUnreachable) {
    private static final String SECTION = "fenceline.cluster.";

    static ClusterSettings fromConfig(Config root) {
        String key = SECTION + "ask-timeout";
        Duration ask;
        boolean probe;
        try {
            ask = root.getDuration(key);
            probe = root.getBoolean(SECTION + "probe-on-unreachable");
        } catch (com.typesafe.config.ConfigException e) {
            throw new ConfigurationException(e.getMessage(), e);
        }
        if (ask.toMillis() < 1 || ask.compareTo(Duration.ofHours(1)) > 0) {
            throw new ConfigurationException(key + " = " + ask + ": must be 1ms to 1h");
        }
        return new ClusterSettings(ask, probe);
    }
}
