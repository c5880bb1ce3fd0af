package dev.fenceline.internal;

import com.typesafe.config.Config;
import com.typesafe.config.ConfigValue;
import dev.fenceline.ConfigurationException;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;

/**
 * Finds keys under {@code fenceline} that no {@code reference.conf} on the class path documents: a
 * typo ({@code fenceline.fence.mdoe}) or a transport that is not there ({@code fenceline.transport.ucx})
 * would otherwise be ignored in silence. Every key that a settings class reads is documented in the
 * reference of the jar that reads it (a test checks that), so the references are the list of keys;
 * but a reference may name open sections ({@code fenceline.open-sections}), whose keys are another
 * library's and are passed on unchecked.
 */
public final class ConfigKeys {
    private static final String ROOT = "fenceline";

    private ConfigKeys() {
    }

    /**
     * @param config the whole configuration, references included
     * @param reference every {@code reference.conf} on the class path, merged
     * @return the unknown keys under {@code fenceline}, each with the nearest known key, sorted
     */
    public static List<String> unknown(Config config, Config reference) {
        if (!config.hasPath(ROOT)) {
            return List.of();
        }
        Set<String> known = new TreeSet<>();
        if (reference.hasPath(ROOT)) {
            for (Map.Entry<String, ConfigValue> e : reference.getConfig(ROOT).entrySet()) {
                known.add(ROOT + "." + e.getKey());
            }
        }
        List<String> open = new ArrayList<>();
        if (reference.hasPath(ROOT + ".open-sections")) {
            for (String section : reference.getObject(ROOT + ".open-sections").keySet()) {
                open.add(ROOT + "." + section + ".");
            }
        }
        List<String> problems = new ArrayList<>();
        for (Map.Entry<String, ConfigValue> e : config.getConfig(ROOT).entrySet()) {
            String key = ROOT + "." + e.getKey();
            if (!reference.hasPathOrNull(key) && open.stream().noneMatch(key::startsWith)) {
                String near = nearest(key, known);
                problems.add(key + " (set in " + e.getValue().origin().description() + ") is not a Fenceline setting"
                        + (near == null ? "" : "; did you mean " + near + "?"));
            }
        }
        problems.sort(null);
        return problems;
    }

    /**
     * Refuses unknown keys, or logs them, as {@code fenceline.unknown-keys} says.
     *
     * @param config the whole configuration, references included
     * @param reference every {@code reference.conf} on the class path, merged
     * @throws ConfigurationException listing every unknown key, if the setting is {@code error}
     */
    public static void check(Config config, Config reference) {
        String mode = config.hasPath(ROOT + ".unknown-keys")
                ? config.getString(ROOT + ".unknown-keys").trim().toLowerCase(java.util.Locale.ROOT) : "error";
        if (!List.of("error", "warn", "ignore").contains(mode)) {
            throw new ConfigurationException("fenceline.unknown-keys = " + mode + ": expected error, warn or ignore");
        }
        if (mode.equals("ignore")) {
            return;
        }
        List<String> problems = unknown(config, reference);
        if (problems.isEmpty()) {
            return;
        }
        if (mode.equals("error")) {
            throw new ConfigurationException("unknown configuration " + (problems.size() == 1 ? "key: " : "keys: ")
                    + String.join("; ", problems) + " (fenceline.unknown-keys = warn only logs them)");
        }
        org.slf4j.LoggerFactory.getLogger(ConfigKeys.class).warn("unknown configuration keys, ignored: {}",
                String.join("; ", problems));
    }

    /** The known key fewest edits away, if it is close enough to be a typo. */
    private static String nearest(String key, Set<String> known) {
        String best = null;
        int bestDistance = Integer.MAX_VALUE;
        for (String k : known) {
            int d = distance(key, k);
            if (d < bestDistance) {
                bestDistance = d;
                best = k;
            }
        }
        return best != null && bestDistance <= Math.max(2, key.length() / 5) ? best : null;
    }

    /** Levenshtein distance. */
    static int distance(String a, String b) {
        int[] prev = new int[b.length() + 1];
        int[] cur = new int[b.length() + 1];
        for (int j = 0; j <= b.length(); j++) {
            prev[j] = j;
        }
        for (int i = 1; i <= a.length(); i++) {
            cur[0] = i;
            for (int j = 1; j <= b.length(); j++) {
                int cost = a.charAt(i - 1) == b.charAt(j - 1) ? 0 : 1;
                cur[j] = Math.min(Math.min(cur[j - 1] + 1, prev[j] + 1), prev[j - 1] + cost);
            }
            int[] t = prev;
            prev = cur;
            cur = t;
        }
        return prev[b.length()];
    }
}
