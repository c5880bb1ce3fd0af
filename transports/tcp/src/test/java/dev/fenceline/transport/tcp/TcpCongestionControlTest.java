package dev.fenceline.transport.tcp;

import static org.junit.jupiter.api.Assertions.assertEquals;
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
import java.net.InetSocketAddress;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * {@code congestion-control} reaches the sockets of both ends of a lane, and a name the kernel
 * refuses stops the transport at its start, naming the key.
 */
class TcpCongestionControlTest {
    @BeforeEach
    void epoll() {
        assumeTrue(Epoll.isAvailable(), () -> "native epoll unavailable: " + Epoll.unavailabilityCause());
    }

    private static Config section(String hocon) {
        return ConfigFactory.parseString("listen = [\"127.0.0.1:0\"]\nsecret = \"" + TcpConfigs.SECRET + "\"\n"
                + hocon).withFallback(ConfigFactory.defaultReference().getConfig(TcpSettings.SECTION));
    }

    private static TcpTransport transport(String name, UUID id, Config section) {
        return new TcpTransport(new TransportContext(id, name, section, (RemoteAccessTarget) null),
                TcpSettings.fromSection(section));
    }

    /** The congestion controls of a lane's two sockets: the origin's, then the one its target accepted. */
    private static List<String> laneSockets(String hocon) throws Exception {
        UUID targetId = UUID.randomUUID();
        TcpTransport target = transport("target", targetId, section(hocon));
        TcpTransport origin = transport("origin", UUID.randomUUID(), section(hocon));
        try {
            InetSocketAddress at = TcpAddress.decode(target.localAddress()).get(0);
            TcpLane lane = origin.open(new Rail(0, null, at, targetId)).get(20, TimeUnit.SECONDS);
            List<String> found = new ArrayList<>();
            found.add(NettyIo.congestionControlOf(lane.channel()));
            for (Channel ch : target.channels()) {
                if (!(ch instanceof ServerSocketChannel) && ch.isActive()) {
                    found.add(NettyIo.congestionControlOf(ch));
                }
            }
            return found;
        } finally {
            origin.close();
            target.close();
        }
    }

    private static String kernelDefault() throws Exception {
        return Files.readString(Path.of("/proc/sys/net/ipv4/tcp_congestion_control")).trim();
    }

    /** reno is always built in and allowed, and is neither of the usual defaults (cubic, bbr). */
    @Test
    void bothEndsOfALaneTakeTheConfiguredCongestionControl() throws Exception {
        assumeTrue(!kernelDefault().equals("reno"), "the kernel's default is reno already");
        assertEquals(List.of("reno", "reno"), laneSockets("congestion-control = reno"));
    }

    @Test
    void emptyLeavesTheKernelsDefault() throws Exception {
        String d = kernelDefault();
        assertEquals(List.of(d, d), laneSockets(""));
    }

    @Test
    void aNameTheKernelDoesNotHaveStopsTheTransportAtItsStart() {
        ConfigurationException e = assertThrows(ConfigurationException.class,
                () -> transport("w", UUID.randomUUID(), section("congestion-control = nosuchcc")).close());
        String m = e.getMessage();
        assertTrue(m.startsWith(TcpSettings.SECTION + ".congestion-control = nosuchcc is invalid: the kernel refused"),
                m);
        assertTrue(m.contains("available: ") && m.contains("reno"), m);
    }

    @Test
    void nioCannotSetIt() {
        ConfigurationException e = assertThrows(ConfigurationException.class,
                () -> transport("w", UUID.randomUUID(), section("io = nio\ncongestion-control = reno")).close());
        assertTrue(e.getMessage().contains("only native epoll"), e.getMessage());
    }
}
