package dev.fenceline.internal;

import static org.junit.jupiter.api.Assertions.assertDoesNotThrow;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.typesafe.config.Config;
import com.typesafe.config.ConfigFactory;
import dev.fenceline.ConfigurationException;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** A key under fenceline that no reference.conf documents is refused, with the nearest known key. */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class ConfigKeysTest {
    private static final Config REFERENCE = ConfigFactory.defaultReference();

    private static Config user(String hocon) {
        return ConfigFactory.parseString(hocon).withFallback(REFERENCE).resolve();
    }

    @Test
    void theDefaultsAndEveryDocumentedKeyPass() {
        assertEquals(List.of(), ConfigKeys.unknown(REFERENCE, REFERENCE));
        assertEquals(List.of(), ConfigKeys.unknown(user("fenceline.fence.mode = strong\n"
                + "fenceline.endpoint.keepalive.interval = 2s"), REFERENCE));
    }

    @Test
    void theUnknownKeysModeIsReadAsEveryOneOfKeyIsWhateverItsCase() {
        org.junit.jupiter.api.Assertions.assertDoesNotThrow(() -> ConfigKeys.check(user("fenceline.unknown-keys = WARN"),
                REFERENCE));
        org.junit.jupiter.api.Assertions.assertDoesNotThrow(() -> ConfigKeys.check(user(
                "fenceline.unknown-keys = \" Ignore \"\nfenceline.fence.mdoe = strong"), REFERENCE));
    }

    @Test
    void aTypoIsNamedWithTheKeyItMeant() {
        List<String> problems = ConfigKeys.unknown(user("fenceline.fence.mdoe = strong"), REFERENCE);
        assertEquals(1, problems.size(), problems.toString());
        assertTrue(problems.get(0).startsWith("fenceline.fence.mdoe (set in String: 1) is not a Fenceline setting;"
                + " did you mean fenceline.fence.mode?"), problems.get(0));
        ConfigurationException e = assertThrows(ConfigurationException.class,
                () -> ConfigKeys.check(user("fenceline.fence.mdoe = strong"), REFERENCE));
        assertTrue(e.getMessage().contains("fenceline.fence.mdoe") && e.getMessage().contains("unknown-keys = warn"),
                e.getMessage());
    }

    @Test
    void aTransportWhoseJarIsMissingIsUnknownWithoutAGuess() {
        List<String> problems = ConfigKeys.unknown(user("fenceline.transport.ucx.tls = [rc_mlx5]"), REFERENCE);
        assertEquals(List.of("fenceline.transport.ucx.tls (set in String: 1) is not a Fenceline setting"), problems);
    }

    @Test
    void keysUnderAnOpenSectionPassAndOnlyThere() {
        Config reference = ConfigFactory.parseString("""
                fenceline.open-sections { "transport.x.native" = "the library's own settings" }
                fenceline.transport.x.native { A = 1 }
                """).withFallback(REFERENCE);
        assertEquals(List.of(), ConfigKeys.unknown(ConfigFactory.parseString(
                "fenceline.transport.x.native { B = 2, deeper.C = 3 }").withFallback(reference), reference));
        List<String> problems = ConfigKeys.unknown(ConfigFactory.parseString("fenceline.transport.x.nativ.B = 2")
                .withFallback(reference), reference);
        assertEquals(1, problems.size(), "beside the open section, keys are checked: " + problems);
    }

    @Test
    void warnAndIgnoreLetItPassAndABadModeIsRefused() {
        assertDoesNotThrow(() -> ConfigKeys.check(user("fenceline.unknown-keys = warn\nfenceline.typo = 1"), REFERENCE));
        assertDoesNotThrow(() -> ConfigKeys.check(user("fenceline.unknown-keys = ignore\nfenceline.typo = 1"),
                REFERENCE));
        ConfigurationException e = assertThrows(ConfigurationException.class,
                () -> ConfigKeys.check(user("fenceline.unknown-keys = shout"), REFERENCE));
        assertTrue(e.getMessage().contains("fenceline.unknown-keys = shout"), e.getMessage());
    }

    @Test
    void distanceCountsEdits() {
        assertEquals(0, ConfigKeys.distance("mode", "mode"));
        assertEquals(2, ConfigKeys.distance("mdoe", "mode"));
        assertEquals(3, ConfigKeys.distance("", "abc"));
    }
}
