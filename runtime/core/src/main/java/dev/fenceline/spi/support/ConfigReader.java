package dev.fenceline.spi.support;

import com.typesafe.config.Config;
import com.typesafe.config.ConfigException;
import dev.fenceline.ConfigurationException;
import java.time.Duration;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;

/**
 * Reads a configuration section, turning every parse error into a {@link ConfigurationException}
 * that names the full key and the bad value, and remembering which keys were read so a test can
 * prove that every documented key is used.
 */
public final class ConfigReader {
    private final Config config;
    private final String prefix;
    private final Set<String> read = new TreeSet<>();

    /**
     * @param root the whole configuration
     * @param path the section to read, e.g. {@code fenceline}
     */
    public ConfigReader(Config root, String path) {
        try {
            this.config = root.getConfig(path);
        } catch (ConfigException e) {
            throw new ConfigurationException("configuration section '" + path + "' is missing or not an object: "
                    + e.getMessage(), e);
        }
        this.prefix = path + ".";
    }

    /** @return the full paths of every key read so far */
    public Set<String> keysRead() {
        return Set.copyOf(read);
    }

    /** @return the section being read */
    public Config config() {
        return config;
    }

    /**
     * @param key relative key
     * @return the string value
     */
    public String string(String key) {
        return get(key, () -> config.getString(key));
    }

    /**
     * Reads a secret: no error message ever contains its value, only its length.
     *
     * @param key relative key
     * @return the string value
     */
    public String secret(String key) {
        read.add(prefix + key);
        try {
            return config.getString(key);
        } catch (ConfigException.Missing e) {
            throw new ConfigurationException(prefix + key + " is missing (every key has a default in reference.conf;"
                    + " was it removed or set to null?)");
        } catch (ConfigException e) {
            throw new ConfigurationException(prefix + key + " is invalid: expected a string (value not shown: it is a"
                    + " secret)");
        }
    }

    /**
     * @param key relative key
     * @param allowed the allowed values (case-insensitive)
     * @return the value, lower-cased
     */
    public String oneOf(String key, List<String> allowed) {
        String v = string(key).trim().toLowerCase(java.util.Locale.ROOT);
        if (!allowed.contains(v)) {
            throw invalid(key, v, "one of " + allowed);
        }
        return v;
    }

    /**
     * @param key relative key
     * @param min the smallest allowed value
     * @param max the largest allowed value
     * @return the value
     */
    public int intIn(String key, int min, int max) {
        integral(key);
        int v = get(key, () -> config.getInt(key));
        if (v < min || v > max) {
            throw invalid(key, Integer.toString(v), "an integer in [" + min + ", " + max + "]");
        }
        return v;
    }

    /**
     * @param key relative key
     * @return the value
     */
    public long longValue(String key) {
        integral(key);
        return get(key, () -> config.getLong(key));
    }

    /** An integer key given a fraction is refused: Typesafe Config would drop the fraction silently. */
    private void integral(String key) {
        Number n = get(key, () -> config.getNumber(key));
        if ((n instanceof Double || n instanceof Float || n instanceof java.math.BigDecimal)
                && n.doubleValue() != Math.rint(n.doubleValue())) {
            throw invalid(key, n.toString(), "an integer");
        }
    }

    /**
     * @param key relative key
     * @return the value (HOCON booleans: true/false, on/off, yes/no)
     */
    public boolean bool(String key) {
        return get(key, () -> config.getBoolean(key));
    }

    /**
     * @param key relative key
     * @param min the smallest allowed size in bytes
     * @param max the largest allowed size in bytes
     * @return the size in bytes (HOCON size units: B, KiB, MiB ...)
     */
    public long bytesIn(String key, long min, long max) {
        long v = get(key, () -> config.getBytes(key));
        if (v < min || v > max) {
            throw invalid(key, Long.toString(v), "a size in [" + min + ", " + max + "] bytes");
        }
        return v;
    }

    /**
     * @param key relative key
     * @param min the shortest allowed duration
     * @param max the longest allowed duration
     * @return the duration
     */
    public Duration durationIn(String key, Duration min, Duration max) {
        Duration v = get(key, () -> config.getDuration(key));
        if (v.compareTo(min) < 0 || v.compareTo(max) > 0) {
            throw invalid(key, v.toString(), "a duration in [" + min + ", " + max + "]");
        }
        return v;
    }

    /**
     * @param key relative key
     * @return the list of strings
     */
    public List<String> stringList(String key) {
        return get(key, () -> config.getStringList(key));
    }

    /**
     * @param key relative key
     * @return the list of objects
     */
    public List<? extends Config> configList(String key) {
        return get(key, () -> config.getConfigList(key));
    }

    /**
     * Marks a key as read by code that reads it through {@link #config()} directly.
     *
     * @param key relative key
     */
    public void markRead(String key) {
        read.add(prefix + key);
    }

    /**
     * @param key relative key
     * @param value the bad value
     * @param expected what is allowed
     * @return an exception naming the full key, the value and what is allowed
     */
    public ConfigurationException invalid(String key, String value, String expected) {
        return new ConfigurationException(prefix + key + " = " + value + " is invalid: expected " + expected);
    }

    private <T> T get(String key, java.util.function.Supplier<T> reader) {
        read.add(prefix + key);
        try {
            return reader.get();
        } catch (ConfigException.Missing e) {
            throw new ConfigurationException(prefix + key + " is missing (every key has a default in reference.conf;"
                    + " was it removed or set to null?)", e);
        } catch (ConfigException e) {
            String raw = config.hasPath(key) ? config.getValue(key).render() : "<unset>";
            throw new ConfigurationException(prefix + key + " = " + raw + " is invalid: " + e.getMessage(), e);
        }
    }
}
