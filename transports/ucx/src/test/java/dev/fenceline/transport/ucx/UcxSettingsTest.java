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
        assertEquals(List.of("posix", "cma"), s.tls());
        assertEquals(List.of("all"), s.devices());
        assertFalse(s.connectToEndpoint());
        assertTrue(settings("connect = endpoint").connectToEndpoint());
    }

    @Test
    void badValuesNameTheirKey() {
        for (String[] bad : new String[][] {{"tls = []", "tls"}, {"devices = []", "devices"},
                {"connect = sideways", "connect"}, {"max-fragment = 512", "max-fragment"},
                {"queue-depth = 0", "queue-depth"}, {"idle-strategy = nap", "idle-strategy"},
                {"max-registrations = 0", "max-registrations"}, {"connect-timeout = 0s", "connect-timeout"},
                {"reconnect.give-up-after = 0s", "reconnect.give-up-after"}, {"uct = 5", "uct"},
                {"uct { posix = 3 }", "uct.posix"}, {"uct { tcp { tx_seg_size = 1 } }", "uct.tcp.tx_seg_size"},
                {"uct { tcp { TX_SEG_SIZE = [1] } }", "uct.tcp.TX_SEG_SIZE"}, {"spin-passes = -1", "spin-passes"},
                {"spin-passes = lots", "spin-passes"}, {"spin-passes = 1000001", "spin-passes"},
                {"progress-cpus = [1024]", "progress-cpus"}, {"progress-cpus = [-1]", "progress-cpus"},
                {"progress-cpus = [1, 1]", "progress-cpus"}, {"progress-cpus = one", "progress-cpus"},
                {"tcp-unchecked-writes = yes", "tcp-unchecked-writes"}, {"native-copy = on", "native-copy"},
                {"native-copy-from = 4095", "native-copy-from"}, {"native-copy-from = 2GiB", "native-copy-from"}}) {
            ConfigurationException e = assertThrows(ConfigurationException.class, () -> settings(bad[0]), bad[0]);
            assertTrue(e.getMessage().startsWith(UcxSettings.SECTION + "." + bad[1]), e.getMessage());
        }
    }

    /**
     * UCT's tcp writes what any connected process's put names ({@link UctTcpUncheckedPutsTest}): it is
     * opened only where that is accepted, however the list selects it.
     */
    @Test
    void uctTcpIsSelectedOnlyWhereItsUncheckedWritesAreAccepted() {
        for (String tls : List.of("[tcp]", "[posix, tcp]", "[all]", "[\"^posix\"]", "[\"^ud\", rc]")) {
            ConfigurationException e = assertThrows(ConfigurationException.class, () -> settings("tls = " + tls), tls);
            assertTrue(e.getMessage().startsWith(UcxSettings.SECTION + ".tls = ")
                    && e.getMessage().contains("selects UCT's tcp")
                    && e.getMessage().contains(UcxSettings.SECTION + ".tcp-unchecked-writes = accept"), e.getMessage());
            assertEquals(list(tls), settings("tls = " + tls + "\ntcp-unchecked-writes = accept").tls(), tls);
        }
        for (String tls : List.of("[posix, cma]", "[sm]", "[ib, sm]", "[\"^tcp\"]", "[\"^tcp\", ud]")) {
            assertEquals(list(tls), settings("tls = " + tls).tls(), tls);
        }
    }

    private static List<String> list(String hocon) {
        return ConfigFactory.parseString("list = " + hocon).getStringList("list");
    }

    @Test
    void theNativeCopyTakesAccessesFromItsThresholdOrNone() {
        assertEquals(256 << 10, settings("").nativeCopyFrom());
        assertEquals(16 << 10, settings("native-copy-from = 16KiB").nativeCopyFrom());
        assertEquals(Integer.MAX_VALUE, settings("native-copy = off\nnative-copy-from = 4KiB").nativeCopyFrom());
    }

    @Test
    void spinPassesAreAutoOrANumber() {
        UcxSettings auto = settings("");
        assertEquals(100, auto.spinsFor(List.of("posix", "cma")));
        assertEquals(100, auto.spinsFor(List.of("rc_mlx5", "posix")), "RDMA polls memory: a pass is cheap");
        assertEquals(0, auto.spinsFor(List.of("posix", "tcp")), "a tcp pass is a system call");
        assertEquals(5000, settings("spin-passes = 5000").spinsFor(List.of("tcp")));
        assertEquals(0, settings("spin-passes = 0").spinsFor(List.of("posix")));
    }

    @Test
    void uctSettingsPassThroughPerTransport() {
        UcxSettings s = settings("uct { posix { MM_FIFO_SIZE = 128 } }");
        assertEquals(Map.of("MM_FIFO_SIZE", "128"), s.uct().get("posix"));
        assertEquals(Map.of("TX_SEG_SIZE", "256K", "RX_SEG_SIZE", "256K"), s.uct().get("tcp"), "the default kept");
        assertTrue(s.keysRead().contains(UcxSettings.SECTION + ".uct.posix.MM_FIFO_SIZE"), s.keysRead().toString());
    }

    /** @return a Fenceline over UCT posix with these UCT settings for it */
    private static dev.fenceline.Fenceline posixWith(String uctSettings) {
        return dev.fenceline.Fenceline.create(ConfigFactory.parseString("fenceline.transports = [ucx]\n"
                + "fenceline.transport.ucx { tls = [posix], uct { posix { " + uctSettings + " } } }"));
    }

    /** @return the message of the configuration error that refused a worker of {@code f} */
    private static String refusal(dev.fenceline.Fenceline f) {
        Throwable t = assertThrows(java.util.concurrent.ExecutionException.class,
                () -> f.newWorker("w").toCompletableFuture().get(20, java.util.concurrent.TimeUnit.SECONDS));
        Throwable c = t.getCause();
        while (c != null && !(c instanceof ConfigurationException)) {
            c = c.getCause();
        }
        assertTrue(c != null, "not a configuration error: " + t);
        return c.getMessage();
    }

    @Test
    void aUctSettingUctDoesNotKnowIsAConfigurationErrorNamingIt() {
        UcxAssumptions.ucxAvailable();
        try (dev.fenceline.Fenceline f = posixWith("NO_SUCH_SETTING = 1")) {
            String m = refusal(f);
            assertTrue(m.contains(UcxSettings.SECTION + ".uct.posix") && m.contains("NO_SUCH_SETTING"), m);
        }
    }

    /**
     * UCT takes the settings posix and sysv share by its shared-memory table's prefix (MM_FIFO_SIZE),
     * though `ucx_info -c` lists them without it (UCX_POSIX_FIFO_SIZE): the prefixed name opens, and
     * the bare one is refused with a message that names the prefixed one.
     */
    @Test
    void posixSharedMemorySettingsTakeTheirTablesPrefix() throws Exception {
        UcxAssumptions.ucxAvailable();
        try (dev.fenceline.Fenceline f = posixWith("MM_FIFO_SIZE = 16")) {
            assertTrue(f.newWorker("w").toCompletableFuture().get(20, java.util.concurrent.TimeUnit.SECONDS) != null);
        }
        try (dev.fenceline.Fenceline f = posixWith("FIFO_SIZE = 16")) {
            String m = refusal(f);
            assertTrue(m.contains("FIFO_SIZE=16") && m.contains("MM_FIFO_SIZE"), m);
        }
    }

    /** The worker's window must hold every operation an endpoint's lanes can hold, or each past it is refused. */
    @Test
    void theWorkersWindowCoversEveryOperationInFlight() {
        com.typesafe.config.Config section = ConfigFactory.defaultReference().getConfig(UcxSettings.SECTION);
        ConfigurationException e = assertThrows(ConfigurationException.class, () -> new UcxTransport(
                new dev.fenceline.spi.TransportContext(java.util.UUID.randomUUID(), "w", section, null,
                        new dev.fenceline.spi.support.ExactlyOnceWindows("w", 16383, java.time.Duration.ofMinutes(1),
                                1 << 20, 1 << 22, System::nanoTime)), UcxSettings.fromSection(section)));
        assertTrue(e.getMessage().contains("fenceline.exactly-once.window = 16383") && e.getMessage().contains("16384"),
                e.getMessage());
    }
}
