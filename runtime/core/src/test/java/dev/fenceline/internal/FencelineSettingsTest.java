package dev.fenceline.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.typesafe.config.Config;
import com.typesafe.config.ConfigFactory;
import com.typesafe.config.ConfigValue;
import dev.fenceline.ConfigurationException;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import java.util.concurrent.TimeUnit;

@Timeout(value = 60, unit = TimeUnit.SECONDS)
class FencelineSettingsTest {
    static Config reference() {
        return ConfigFactory.defaultReference();
    }

    static Config with(String hocon) {
        return ConfigFactory.parseString(hocon).withFallback(reference()).resolve();
    }

    @Test
    void everyDocumentedKeyIsReadAndEveryReadKeyIsDocumented() {
        Set<String> documented = new TreeSet<>();
        for (Map.Entry<String, ConfigValue> e : reference().getConfig("fenceline").entrySet()) {
            if (!e.getKey().startsWith("transport.")) { // transports own their sections
                documented.add("fenceline." + e.getKey());
            }
        }
        FencelineSettings s = FencelineSettings.fromConfig(reference());
        assertEquals(documented, new TreeSet<>(s.keysRead()));
    }

    /**
     * Values that passed before and misbehaved later: a fraction for an integer (silently cut), a
     * dispatcher path that is malformed (a raw Typesafe exception) or inside the fenceline section,
     * and a window smaller than the fragments of the largest put (its tail refused after its head
     * was applied).
     */
    @Test
    void valuesThatWouldMisbehaveLaterAreRefusedNamingTheirKey() {
        for (String[] bad : new String[][] {{"fenceline.endpoint.submit-batch = 2.9", "endpoint.submit-batch"},
                {"fenceline.dispatcher = \"my-dispatcher.\"", "dispatcher"},
                {"fenceline.dispatcher = fenceline.stat", "dispatcher"},
                {"fenceline.exactly-once.window = 4096", "exactly-once.window"},
                {"fenceline.exactly-once.window = 1048576\nfenceline.protocol.fragment-size = 1KiB",
                    "exactly-once.window"}}) {
            ConfigurationException e = assertThrows(ConfigurationException.class,
                    () -> FencelineSettings.fromConfig(with(bad[0])), bad[0]);
            assertTrue(e.getMessage().startsWith("fenceline." + bad[1]), e.getMessage());
        }
        assertEquals(8192, FencelineSettings.fromConfig(with("fenceline.exactly-once.window = 8192"))
                .exactlyOnce().window(), "2 GiB in 256 KiB fragments");
        FencelineSettings.fromConfig(with("fenceline.endpoint.submit-batch = 4.0")); // integral: taken
    }

    @Test
    void defaultsResolve() {
        FencelineSettings s = FencelineSettings.fromConfig(reference());
        assertEquals(FenceMode.ENDPOINT, s.fenceMode(), "auto is endpoint");
        assertEquals(ErrorMode.FAILOVER, s.errorMode());
        assertTrue(s.bandwidthThreshold() > s.shortMax());
        assertEquals(java.time.Duration.ofSeconds(1), s.keepaliveInterval());
        assertEquals(java.time.Duration.ofSeconds(20), s.keepaliveIdleInterval(), "idle lanes probed less often");
    }

    @Test
    void theKeepaliveIdleIntervalIsADurationInItsBounds() {
        assertEquals(java.time.Duration.ofMillis(1500), FencelineSettings.fromConfig(
                with("fenceline.endpoint.keepalive.idle-interval = 1500ms")).keepaliveIdleInterval());
        ConfigurationException e = assertThrows(ConfigurationException.class,
                () -> FencelineSettings.fromConfig(with("fenceline.endpoint.keepalive.idle-interval = 0s")));
        assertTrue(e.getMessage().contains("fenceline.endpoint.keepalive.idle-interval"), e.getMessage());
    }

    @Test
    void badValuesNameTheKeyAndTheValue() {
        ConfigurationException e = assertThrows(ConfigurationException.class,
                () -> FencelineSettings.fromConfig(with("fenceline.fence.mode = sometimes")));
        assertTrue(e.getMessage().contains("fenceline.fence.mode = sometimes"), e.getMessage());
        e = assertThrows(ConfigurationException.class,
                () -> FencelineSettings.fromConfig(with("fenceline.protocol.fragment-size = 12")));
        assertTrue(e.getMessage().contains("fenceline.protocol.fragment-size = 12"), e.getMessage());
        e = assertThrows(ConfigurationException.class,
                () -> FencelineSettings.fromConfig(with("fenceline.endpoint.connect-timeout = banana")));
        assertTrue(e.getMessage().contains("fenceline.endpoint.connect-timeout"), e.getMessage());
        e = assertThrows(ConfigurationException.class,
                () -> FencelineSettings.fromConfig(with("fenceline.transports = []")));
        assertTrue(e.getMessage().contains("fenceline.transports"), e.getMessage());
        e = assertThrows(ConfigurationException.class, () -> FencelineSettings.fromConfig(
                with("fenceline.protocol { short-max = 64KiB, bandwidth-threshold = 16KiB }")));
        assertTrue(e.getMessage().contains("bandwidth-threshold"), e.getMessage());
    }

    @Test
    void autoEnablesTheRealTransportsOnTheClassPathAndSimOnlyWithoutThem() {
        FencelineSettings auto = FencelineSettings.fromConfig(reference());
        assertEquals(java.util.List.of(FencelineSettings.AUTO), auto.transports(), "the default");
        assertEquals(java.util.List.of("shm", "tcp"),
                auto.resolveTransports(Set.of("tcp", "sim", "shm")).transports(), "a service's classpath with the test kit");
        assertEquals(java.util.List.of("tcp"), auto.resolveTransports(Set.of("tcp")).transports(), "production");
        assertEquals(java.util.List.of("shm", "tcp", "zeta"), auto.resolveTransports(Set.of("zeta", "tcp", "shm"))
                .transports(), "unknown names after the known ones");
        assertEquals(java.util.List.of("sim"), auto.resolveTransports(Set.of("sim")).transports(), "only the test kit");
        ConfigurationException none = assertThrows(ConfigurationException.class, () -> auto.resolveTransports(Set.of()));
        assertTrue(none.getMessage().contains("no transport provider is on the class path"), none.getMessage());
        FencelineSettings listed = FencelineSettings.fromConfig(with("fenceline.transports = [sim, tcp]"));
        assertEquals(java.util.List.of("sim", "tcp"), listed.resolveTransports(Set.of("shm")).transports(),
                "a list is taken as it is");
        ConfigurationException bad = assertThrows(ConfigurationException.class,
                () -> FencelineSettings.fromConfig(with("fenceline.transports = tcp")));
        assertTrue(bad.getMessage().contains("fenceline.transports") && bad.getMessage().contains("auto, or a list"),
                bad.getMessage());
    }

    @Test
    void transportsThatCannotRunAreLeftOutOfAListUnlessNoneCanRun() {
        java.util.Map<String, String> why = java.util.Map.of("ucx", "no libucp here");
        FencelineSettings listed = FencelineSettings.fromConfig(with("fenceline.transports = [ucx, tcp]"));
        assertEquals(java.util.List.of("tcp"), listed.withoutUnavailable(why).transports());
        FencelineSettings clean = FencelineSettings.fromConfig(with("fenceline.transports = [shm, tcp]"));
        assertEquals(clean, clean.withoutUnavailable(why), "nothing named is unavailable: the same settings");
        FencelineSettings auto = FencelineSettings.fromConfig(reference());
        assertEquals(auto, auto.withoutUnavailable(why), "auto resolves among the available ones later");
        FencelineSettings only = FencelineSettings.fromConfig(with("fenceline.transports = [ucx]"));
        ConfigurationException none = assertThrows(ConfigurationException.class, () -> only.withoutUnavailable(why));
        assertTrue(none.getMessage().contains("ucx: no libucp here"), none.getMessage());
    }
}
