package dev.fenceline.testkit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.typesafe.config.Config;
import com.typesafe.config.ConfigFactory;
import com.typesafe.config.ConfigValue;
import dev.fenceline.ConfigurationException;
import dev.fenceline.Endpoint;
import dev.fenceline.Fenceline;
import dev.fenceline.MemoryRegion;
import dev.fenceline.Worker;
import dev.fenceline.transport.sim.SimSettings;
import java.io.File;
import java.nio.ByteBuffer;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

@Timeout(value = 60, unit = TimeUnit.SECONDS)
class ConfigurationTest {
    static List<File> samples() {
        String dir = System.getProperty("fencelineTestConfigDir");
        assertNotNull(dir, "surefire passes fencelineTestConfigDir");
        File[] files = new File(dir).listFiles((d, n) -> n.endsWith(".conf"));
        assertNotNull(files, "config directory " + dir + " exists");
        assertTrue(files.length >= 4, "single host, two rails (sim and tcp) and failover samples");
        Arrays.sort(files);
        for (File f : files) {
            List<String> t = ConfigFactory.parseFile(f).getStringList("fenceline.transports");
            assertTrue(t.equals(List.of("sim")) || t.equals(List.of("tcp")) || t.equals(List.of("shm")), f + " uses "
                    + t + ": every sample must be started by a test (sim samples here, tcp samples in"
                    + " transports/tcp's TcpSampleConfigTest, shm samples in transports/shm's ShmSampleConfigTest)");
        }
        return Arrays.stream(files).filter(f -> ConfigFactory.parseFile(f).getStringList("fenceline.transports")
                .equals(List.of("sim"))).toList();
    }

    /** Every sample starts a runtime and moves bytes, so the samples cannot rot. */
    @ParameterizedTest
    @MethodSource("samples")
    void sampleConfigurationsRunAWorkload(File sample) throws Exception {
        Config c = ConfigFactory.parseFile(sample);
        assertFalse(c.isEmpty(), sample + " parses to something");
        try (Fenceline f = Fenceline.create(c)) {
            Worker a = f.newWorker("a").toCompletableFuture().get(10, TimeUnit.SECONDS);
            Worker b = f.newWorker("b").toCompletableFuture().get(10, TimeUnit.SECONDS);
            MemoryRegion r = b.allocate(1 << 20);
            Endpoint ep = a.connect(b.address()).toCompletableFuture().get(10, TimeUnit.SECONDS);
            assertEquals(c.getConfigList("fenceline.transport.sim.lanes").size(), ep.lanes().size());
            ep.put(ByteBuffer.wrap(new byte[] {7}), r.address() + 5, r.remoteKey());
            ep.put(ByteBuffer.allocate(200_000), r.address() + 1000, r.remoteKey());
            ep.flush().toCompletableFuture().get(10, TimeUnit.SECONDS);
            assertEquals(7, r.buffer().get(5));
        }
    }

    @Test
    void everySimKeyIsReadAndEveryReadKeyIsDocumented() {
        Config ref = ConfigFactory.defaultReference();
        Set<String> documented = new TreeSet<>();
        for (Map.Entry<String, ConfigValue> e : ref.getConfig("fenceline.transport.sim").entrySet()) {
            documented.add("fenceline.transport.sim." + e.getKey());
        }
        assertEquals(documented, new TreeSet<>(SimSettings.fromConfig(ref).keysRead()));
    }

    @Test
    void badSimLanesNameTheLane() {
        ConfigurationException e = assertThrows(ConfigurationException.class, () -> SimSettings.fromConfig(
                ConfigFactory.parseString("fenceline.transport.sim.lanes = [{types = [AM], min-delay = 0us, max-delay = 0us},"
                        + " {types = [WARP], min-delay = 0us, max-delay = 0us}]")
                        .withFallback(ConfigFactory.defaultReference()).resolve()));
        assertTrue(e.getMessage().contains("lanes[1]"), e.getMessage());
        e = assertThrows(ConfigurationException.class, () -> SimSettings.fromConfig(
                ConfigFactory.parseString("fenceline.transport.sim.lanes = [{types = [AM]}]")
                        .withFallback(ConfigFactory.defaultReference()).resolve()));
        assertTrue(e.getMessage().contains("lanes[0]") && e.getMessage().contains("min-delay"), e.getMessage());
    }

    @Test
    void unknownTransportIsAConfigurationError() {
        ConfigurationException e = assertThrows(ConfigurationException.class,
                () -> Fenceline.create(ConfigFactory.parseString("fenceline.transports = [carrier-pigeon]")));
        assertTrue(e.getMessage().contains("carrier-pigeon"), e.getMessage());
        assertTrue(e.getMessage().contains("sim"), "names what was found: " + e.getMessage());
    }

    @Test
    void weakModeOnTheTwoLaneDefaultIsRefusedAtConnect() throws Exception {
        try (Fenceline f = Fenceline.create(ConfigFactory.parseString("fenceline.fence.mode = weak"))) {
            Worker a = f.newWorker("a").toCompletableFuture().get(10, TimeUnit.SECONDS);
            Worker b = f.newWorker("b").toCompletableFuture().get(10, TimeUnit.SECONDS);
            var ex = assertThrows(java.util.concurrent.ExecutionException.class,
                    () -> a.connect(b.address()).toCompletableFuture().get(10, TimeUnit.SECONDS));
            assertTrue(ex.getCause() instanceof ConfigurationException, ex.getCause().toString());
        }
    }
}
