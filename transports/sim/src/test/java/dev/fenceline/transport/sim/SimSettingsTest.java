package dev.fenceline.transport.sim;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.typesafe.config.ConfigFactory;
import dev.fenceline.ConfigurationException;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** The sim transport's lane entries: list elements, which reference.conf cannot check key by key. */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class SimSettingsTest {
    private static SimSettings settings(String hocon) {
        return SimSettings.fromSection(ConfigFactory.parseString(hocon)
                .withFallback(ConfigFactory.defaultReference().getConfig("fenceline.transport.sim")));
    }

    @Test
    void aMisspelledLaneSettingIsRefusedNotIgnored() {
        ConfigurationException e = assertThrows(ConfigurationException.class, () -> settings(
                "lanes = [{types = [AM], min-delay = 0us, max-delay = 1us, revokable = off}]"));
        assertTrue(e.getMessage().contains("lanes[0].revokable is not a lane setting"), e.getMessage());
        assertEquals(1, settings("lanes = [{types = [AM], min-delay = 0us, max-delay = 1us, revocable = off,"
                + " protocol = hw}]").lanes().size());
    }
}
