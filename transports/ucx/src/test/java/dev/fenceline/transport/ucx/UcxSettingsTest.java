package dev.fenceline.transport.ucx;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.typesafe.config.ConfigFactory;
import com.typesafe.config.ConfigValue;
import dev.fenceline.ConfigurationException;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import org.junit.jupiter.api.Test;

/** Every documented key is read, and bad values are refused with the full key named. */
class UcxSettingsTest {
    private static UcxSettings settings(String hocon) {
        return UcxSettings.fromSection(ConfigFactory.parseString(hocon)
                .withFallback(ConfigFactory.defaultReference().getConfig(UcxSettings.SECTION)));
    }

    @Test
    void everyDocumentedKeyIsRead() {
        Set<String> documented = new TreeSet<>();
        for (Map.Entry<String, ConfigValue> e : ConfigFactory.defaultReference().getConfig(UcxSettings.SECTION)
                .entrySet()) {
            documented.add(UcxSettings.SECTION + "." + e.getKey());
        }
        assertEquals(documented, new TreeSet<>(settings("").keysRead()));
        UcxSettings s = settings("");
        assertEquals(List.of("posix", "cma", "tcp"), s.tls());
        assertEquals(List.of("all"), s.devices());
        assertFalse(s.connectToEndpoint());
        assertTrue(settings("connect = endpoint").connectToEndpoint());
    }

    @Test
    void badValuesNameTheirKey() {
        for (String[] bad : new String[][] {{"tls = []", "tls"}, {"devices = []", "devices"},
                {"connect = sideways", "connect"}, {"max-fragment = 512", "max-fragment"},
                {"queue-depth = 0", "queue-depth"}, {"idle-strategy = nap", "idle-strategy"},
                {"max-registrations = 0", "max-registrations"}, {"connect-timeout = 0s", "connect-timeout"}}) {
            ConfigurationException e = assertThrows(ConfigurationException.class, () -> settings(bad[0]), bad[0]);
            assertTrue(e.getMessage().startsWith(UcxSettings.SECTION + "." + bad[1]), e.getMessage());
        }
    }
}
