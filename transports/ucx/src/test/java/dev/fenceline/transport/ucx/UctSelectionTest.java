package dev.fenceline.transport.ucx;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.fenceline.ConfigurationException;
import java.util.List;
import org.junit.jupiter.api.Test;

/** UCX_TLS- and UCX_NET_DEVICES-style selection over a host's resources, without UCX. */
class UctSelectionTest {
    private static final String KEY = "fenceline.transport.ucx";

    /** This machine's list in ucx_info's terms, with an RDMA adapter added. */
    private static final List<UctResource> HOST = List.of(
            new UctResource("self", "self", "self", "memory0", "self"),
            new UctResource("tcp", "tcp", "tcp", "eth0", "net"),
            new UctResource("tcp", "tcp", "tcp", "lo", "net"),
            new UctResource("sysv", "sysv", "sysv", "memory", "shm"),
            new UctResource("posix", "posix", "posix", "memory", "shm"),
            new UctResource("cma", "cma", "cma", "memory", "shm"),
            new UctResource("ib", "mlx5_0", "rc_mlx5", "mlx5_0:1", "net"),
            new UctResource("ib", "mlx5_0", "ud_verbs", "mlx5_0:1", "net"));

    private static List<String> names(List<UctResource> rs) {
        return rs.stream().map(UctResource::toString).toList();
    }

    @Test
    void transportsComeInTheOrderGivenAndAliasesExpand() {
        assertEquals(List.of("posix/memory", "cma/memory", "tcp/eth0", "tcp/lo"),
                names(UctSelection.select(HOST, List.of("posix", "cma", "tcp"), List.of("all"), KEY)));
        assertEquals(List.of("posix/memory", "sysv/memory", "cma/memory"),
                names(UctSelection.select(HOST, List.of("sm"), List.of("all"), KEY)), "in UCX's alias order");
        assertEquals(List.of("rc_mlx5/mlx5_0:1", "ud_verbs/mlx5_0:1"),
                names(UctSelection.select(HOST, List.of("ib"), List.of("all"), KEY)));
    }

    @Test
    void devicesChooseNetworkDevicesOnly() {
        assertEquals(List.of("rc_mlx5/mlx5_0:1", "posix/memory", "tcp/lo"),
                names(UctSelection.select(HOST, List.of("rc", "posix", "tcp"), List.of("mlx5_0:1", "lo"), KEY)),
                "shared memory has no device to choose");
        assertEquals(List.of(), UctSelection.select(HOST, List.of("tcp"), List.of("eth1"), KEY));
    }

    @Test
    void aCaretTakesAllButTheNamed() {
        assertEquals(List.of("self/memory0", "posix/memory", "sysv/memory", "cma/memory"),
                names(UctSelection.select(HOST, List.of("^ib", "tcp"), List.of("all"), KEY)));
    }

    @Test
    void aNameThisHostLacksIsSkippedButOneUctLacksIsRefused() {
        assertEquals(List.of("tcp/eth0", "tcp/lo"),
                names(UctSelection.select(HOST, List.of("dc_mlx5", "tcp"), List.of("all"), KEY)));
        ConfigurationException typo = assertThrows(ConfigurationException.class,
                () -> UctSelection.select(HOST, List.of("rc_mlx", "tcp"), List.of("all"), KEY));
        assertTrue(typo.getMessage().contains("no transport 'rc_mlx'") && typo.getMessage().contains("rc_mlx5"),
                typo.getMessage());
        assertThrows(ConfigurationException.class, () -> UctSelection.select(HOST, List.of(), List.of("all"), KEY));
        assertThrows(ConfigurationException.class,
                () -> UctSelection.select(HOST, List.of("tcp", "^ud"), List.of("all"), KEY));
        assertThrows(ConfigurationException.class,
                () -> UctSelection.select(HOST, List.of("tcp"), List.of("all", "lo"), KEY));
    }

    /** On this host, when UCX loads: the default shape here (shared memory and loopback tcp) is found. */
    @Test
    void thisHostOffersSharedMemoryAndLoopbackTcp() {
        UcxAssumptions.ucxAvailable();
        List<String> got = names(UctSelection.select(UcxNative.resources(), List.of("posix", "cma", "tcp"),
                List.of("lo"), KEY));
        assertEquals(List.of("posix/memory", "cma/memory", "tcp/lo"), got);
    }
}
