package dev.fenceline.transport.tcp;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import com.typesafe.config.Config;
import com.typesafe.config.ConfigFactory;
import dev.fenceline.ConfigurationException;
import dev.fenceline.spi.RemoteAccessTarget;
import dev.fenceline.spi.TransportContext;
import io.netty.channel.Channel;
import io.netty.channel.epoll.Epoll;
import io.netty.channel.socket.ServerSocketChannel;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * {@code congestion-control} reaches the sockets of both ends of every lane, and a name the kernel
 * refuses, or any name under NIO, stops the transport at its start, naming the key.
 */
class TcpCongestionControlTest {
    private static final String PROC = "/proc/sys/net/ipv4/";

    @AfterEach
    void noLeaks() throws InterruptedException {
        LeakGuard.assertNoLeaks();
    }

    /** Where Netty's native epoll jar serves (Linux on x86_64) it must load: a skip would hide that. */
    private static void assumeEpoll() {
        assumeTrue(System.getProperty("os.name").equals("Linux") && System.getProperty("os.arch").equals("amd64"),
                "native epoll is shipped for Linux on x86_64 only");
        assertTrue(Epoll.isAvailable(), () -> "native epoll did not load: " + Epoll.unavailabilityCause());
    }

    /** @return the words of a file under /proc/sys/net/ipv4, the test skipped if it cannot be read */
    private static List<String> proc(String name) {
        Path p = Path.of(PROC + name);
        assumeTrue(Files.isReadable(p), () -> p + " cannot be read here");
        try {
            return Arrays.asList(Files.readString(p).trim().split("\\s+"));
        } catch (IOException e) {
            throw new AssertionError("reading " + p, e);
        }
    }

    private static Config section(String hocon) {
        return ConfigFactory.parseString("listen = [\"127.0.0.1:0\"]\nsecret = \"" + TcpConfigs.SECRET + "\"\n"
                + hocon).withFallback(ConfigFactory.defaultReference().getConfig(TcpSettings.SECTION));
    }

    private static TcpTransport transport(String name, UUID id, Config section) {
        return new TcpTransport(new TransportContext(id, name, section, (RemoteAccessTarget) null),
                TcpSettings.fromSection(section));
    }

    /**
     * Opens two lanes between two transports (a bootstrap's option would reach the first socket only:
     * the setting consumes its buffer).
     *
     * @return the congestion controls of the origin's sockets, then of those the target accepted
     */
    private static List<String> laneSockets(String hocon) throws Exception {
        UUID targetId = UUID.randomUUID();
        TcpTransport target = transport("target", targetId, section(hocon));
        try {
            TcpTransport origin = transport("origin", UUID.randomUUID(), section(hocon));
            try {
                InetSocketAddress at = TcpAddress.decode(target.localAddress()).get(0);
                List<String> origins = new ArrayList<>();
                for (int i = 0; i < 2; i++) {
                    TcpLane lane = origin.open(new Rail(i, null, at, targetId)).get(20, TimeUnit.SECONDS);
                    origins.add(NettyIo.congestionControlOf(lane.channel()));
                }
                List<String> accepted = new ArrayList<>();
                for (Channel ch : target.channels()) {
                    if (!(ch instanceof ServerSocketChannel) && ch.isActive()) {
                        accepted.add(NettyIo.congestionControlOf(ch));
                    }
                }
                assertEquals(2, accepted.size(), "the target's accepted connections: " + accepted);
                origins.addAll(accepted);
                return origins;
            } finally {
                origin.close();
            }
        } finally {
            target.close();
        }
    }

    /** One this process may choose that is not the kernel's default: else nothing shows it was set. */
    @Test
    void everySocketOfEveryLaneTakesTheConfiguredCongestionControl() throws Exception {
        assumeEpoll();
        String kernelDefault = proc("tcp_congestion_control").get(0);
        String other = proc("tcp_allowed_congestion_control").stream().filter(n -> !n.equals(kernelDefault))
                .findFirst().orElse(null);
        assumeTrue(other != null, () -> "no congestion control but the default (" + kernelDefault + ") is allowed");
        assertEquals(Collections.nCopies(4, other), laneSockets("congestion-control = " + other));
    }

    @Test
    void emptyLeavesTheKernelsDefault() throws Exception {
        assumeEpoll();
        String kernelDefault = proc("tcp_congestion_control").get(0);
        assertEquals(Collections.nCopies(4, kernelDefault), laneSockets(""));
    }

    @Test
    void aNameTheKernelDoesNotHaveStopsTheTransportAtItsStart() {
        assumeEpoll();
        List<String> available = proc("tcp_available_congestion_control");
        assumeTrue(!available.contains("nosuchcc"), "the kernel has a congestion control named nosuchcc");
        ConfigurationException e = assertThrows(ConfigurationException.class,
                () -> transport("w", UUID.randomUUID(), section("congestion-control = nosuchcc")).close());
        String m = e.getMessage();
        assertTrue(m.startsWith(TcpSettings.SECTION + ".congestion-control = nosuchcc is invalid: the kernel refused"),
                m);
        assertTrue(m.contains("available: " + String.join(" ", available)), m);
    }

    @Test
    void nioCannotSetIt() {
        ConfigurationException e = assertThrows(ConfigurationException.class,
                () -> transport("w", UUID.randomUUID(), section("io = nio\ncongestion-control = reno")).close());
        String m = e.getMessage();
        assertTrue(m.startsWith(TcpSettings.SECTION + ".congestion-control = reno is invalid here: only native epoll"),
                m);
        assertTrue(m.contains("(io = nio)"), m);
        assertFalse(m.contains("null"), m);
    }
}
