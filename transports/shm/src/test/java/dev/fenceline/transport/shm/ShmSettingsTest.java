package dev.fenceline.transport.shm;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.typesafe.config.ConfigFactory;
import com.typesafe.config.ConfigValue;
import dev.fenceline.ConfigurationException;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import java.util.concurrent.TimeUnit;

/** Every documented key is read, and bad values are refused with the full key named. */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class ShmSettingsTest {
    private static ShmSettings settings(String hocon) {
        return ShmSettings.fromSection(ConfigFactory.parseString(hocon)
                .withFallback(ConfigFactory.defaultReference().getConfig(ShmSettings.SECTION)));
    }

    @Test
    void pollingCpusMustBeDistinctCpuNumbers() {
        assertEquals(java.util.List.of(1, 0), settings("polling-cpus = [1, 0]").pollingCpus());
        for (String bad : new String[] {"[0, 0]", "[-1]", "[1024]", "\"all\""}) {
            dev.fenceline.ConfigurationException e = assertThrows(
                    dev.fenceline.ConfigurationException.class, () -> settings("polling-cpus = " + bad), bad);
            assertTrue(e.getMessage().contains(ShmSettings.SECTION + ".polling-cpus"), e.getMessage());
        }
    }

    @Test
    void everyDocumentedKeyIsRead() {
        Set<String> documented = new TreeSet<>();
        for (Map.Entry<String, ConfigValue> e : ConfigFactory.defaultReference().getConfig(ShmSettings.SECTION)
                .entrySet()) {
            documented.add(ShmSettings.SECTION + "." + e.getKey());
        }
        assertEquals(documented, new TreeSet<>(settings("").keysRead()));
        ShmSettings s = settings("");
        assertEquals(4 << 20, s.ringSize());
        assertEquals("doorbell", s.idleStrategy());
        assertTrue(s.cma());
        assertTrue(s.sealedSegments());
        assertEquals(16 << 10, s.nativeCopyFrom());
        assertEquals(Integer.MAX_VALUE, settings("native-copy = off").nativeCopyFrom(), "off: no put takes it");
        assertEquals(1 << 20, settings("native-copy-from = 1MiB").nativeCopyFrom());
        assertTrue(!settings("segments = files").sealedSegments());
    }

    @Test
    void badValuesNameTheirKey() {
        for (String[] bad : new String[][] {{"ring-size = 3MiB", "ring-size"}, {"max-fragment = 1MiB", "max-fragment"},
                {"idle-strategy = nap", "idle-strategy"}, {"cma = maybe", "cma"}, {"segments = memfd", "segments"},
                {"native-copy = on", "native-copy"}, {"native-copy-from = 1KiB", "native-copy-from"},
                {"queue-depth = 0", "queue-depth"},
                {"max-registrations = 0", "max-registrations"}, {"directory = \"\"", "directory"},
                {"directory = shm", "directory"}, {"queue-depth = 2.5", "queue-depth"},
                {"ring-size = 64MiB\nmax-fragment = 4MiB\nmax-backlog = 1MiB", "max-backlog"}}) {
            ConfigurationException e = assertThrows(ConfigurationException.class, () -> settings(bad[0]), bad[0]);
            assertTrue(e.getMessage().startsWith(ShmSettings.SECTION + "." + bad[1]), e.getMessage());
        }
    }

    /** The worker's window must hold every operation an endpoint's lanes can hold, or each past it is refused. */
    @Test
    void theWorkersWindowCoversEveryOperationInFlight() {
        com.typesafe.config.Config section = ConfigFactory.defaultReference().getConfig(ShmSettings.SECTION);
        ConfigurationException e = assertThrows(ConfigurationException.class, () -> new ShmTransport(
                new dev.fenceline.spi.TransportContext(java.util.UUID.randomUUID(), "w", section, null,
                        new dev.fenceline.spi.support.ExactlyOnceWindows("w", 4095, java.time.Duration.ofMinutes(1),
                                1 << 20, 1 << 22, System::nanoTime)), ShmSettings.fromSection(section)));
        assertTrue(e.getMessage().contains("fenceline.exactly-once.window = 4095") && e.getMessage().contains("4096"),
                e.getMessage());
    }
}
