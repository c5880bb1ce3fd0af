package dev.fenceline.transport.tcp;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.typesafe.config.ConfigFactory;
import dev.fenceline.Endpoint;
import dev.fenceline.Fenceline;
import dev.fenceline.MemoryRegion;
import dev.fenceline.Worker;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.SocketTimeoutException;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * What an unauthenticated peer, or one address, can make a target hold is bounded: a pre-auth frame
 * bigger than a handshake ends its connection before it is buffered (and so does one from whatever
 * answers an origin's dial, before its WELCOME), and connections over the
 * per-address limit are closed at once; a well-behaved peer's workload completes meanwhile.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class TcpConnectionLimitsTest {
    private static final String LIMITS = """
            fenceline.transport.tcp.connect-timeout = 30s
            fenceline.transport.tcp.limits.connections-per-address = 3
            """;

    private static InetSocketAddress listenOf(Worker w) {
        return TcpAddress.decode(w.address().transportAddress("tcp")).get(0);
    }

    /** @return whether the server closed the connection within the time (read saw the end) */
    private static boolean closedWithin(Socket s, int millis) throws IOException {
        s.setSoTimeout(millis);
        InputStream in = s.getInputStream();
        try {
            while (true) {
                if (in.read() < 0) {
                    return true;
                }
            }
        } catch (SocketTimeoutException stillOpen) {
            return false;
        } catch (IOException reset) {
            return true;
        }
    }

    private static void goodPeerStillWorks(Fenceline f, Worker target) throws Exception {
        Worker origin = f.newWorker("good").toCompletableFuture().get(10, TimeUnit.SECONDS);
        MemoryRegion r = target.allocate(64);
        Endpoint ep = origin.connect(target.address()).toCompletableFuture().get(10, TimeUnit.SECONDS);
        ep.put(ByteBuffer.allocateDirect(8).order(java.nio.ByteOrder.nativeOrder()).putLong(0, 42), r.address(), origin.unpackRemoteKey(r.remoteKey().toBytes()))
                .toCompletableFuture().get(10, TimeUnit.SECONDS);
        assertEquals(42, r.buffer().order(java.nio.ByteOrder.nativeOrder()).getLong(0));
    }

    @Test
    void aBigFrameBeforeAuthenticationEndsItsConnectionUnbuffered() throws Exception {
        try (Fenceline f = Fenceline.create(ConfigFactory.parseString(LIMITS)
                .withFallback(TcpConfigs.loopback("127.0.0.1:0")))) {
            Worker target = f.newWorker("target").toCompletableFuture().get(10, TimeUnit.SECONDS);
            try (Socket s = new Socket()) {
                s.connect(listenOf(target), 5000);
                OutputStream out = s.getOutputStream();
                out.write(ByteBuffer.allocate(4).putInt(256 << 10).array()); // announces a 256 KiB frame
                out.write(new byte[600]);
                out.flush();
                assertTrue(closedWithin(s, 5000), "the target closed the connection, not waiting for 256 KiB");
            }
            goodPeerStillWorks(f, target);
        }
    }

    /**
     * The origin's side: whatever answers a dial has not proved itself until its WELCOME, and a
     * bigger frame from it ends the connection before its bytes are buffered.
     */
    @Test
    void aBigFrameAnsweringADialEndsItsConnectionUnbuffered() throws Exception {
        try (Fenceline f = Fenceline.create(ConfigFactory.parseString(LIMITS)
                .withFallback(TcpConfigs.loopback("127.0.0.1:0")));
                java.net.ServerSocket impostor = new java.net.ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
            Worker origin = f.newWorker("origin").toCompletableFuture().get(10, TimeUnit.SECONDS);
            dev.fenceline.WorkerAddress fake = new dev.fenceline.WorkerAddress(java.util.UUID.randomUUID(), "impostor",
                    java.util.Map.of("tcp", TcpAddress.encode(List.of(new InetSocketAddress(
                            InetAddress.getLoopbackAddress(), impostor.getLocalPort())))));
            origin.connect(fake); // fails once the test's Fenceline closes, if not before
            impostor.setSoTimeout(10_000);
            try (Socket s = impostor.accept()) {
                java.io.DataInputStream in = new java.io.DataInputStream(s.getInputStream());
                in.readFully(new byte[in.readInt()]); // the origin's HELLO
                OutputStream out = s.getOutputStream();
                out.write(ByteBuffer.allocate(4).putInt(256 << 10).array()); // announces a 256 KiB frame
                out.write(new byte[600]);
                out.flush();
                assertTrue(closedWithin(s, 5000), "the origin closed the connection, not waiting for 256 KiB");
            }
        }
    }

    @Test
    void connectionsOverTheLimitOfOneAddressAreClosedAndOthersAreServed() throws Exception {
        try (Fenceline f = Fenceline.create(ConfigFactory.parseString(LIMITS)
                .withFallback(TcpConfigs.loopback("127.0.0.1:0")))) {
            Worker target = f.newWorker("target").toCompletableFuture().get(10, TimeUnit.SECONDS);
            InetAddress attacker = InetAddress.getByName("127.0.0.2");
            List<Socket> held = new ArrayList<>();
            try {
                for (int i = 0; i < 3; i++) {
                    Socket s = new Socket();
                    s.bind(new InetSocketAddress(attacker, 0));
                    s.connect(listenOf(target), 5000);
                    held.add(s);
                }
                for (Socket s : held) {
                    assertTrue(!closedWithin(s, 300), "within the limit: kept (until the handshake times out)");
                }
                try (Socket over = new Socket()) {
                    over.bind(new InetSocketAddress(attacker, 0));
                    over.connect(listenOf(target), 5000);
                    assertTrue(closedWithin(over, 5000), "the fourth from 127.0.0.2 is closed at once");
                }
                goodPeerStillWorks(f, target); // from 127.0.0.1: its own count
            } finally {
                for (Socket s : held) {
                    s.close();
                }
            }
        }
    }
}
