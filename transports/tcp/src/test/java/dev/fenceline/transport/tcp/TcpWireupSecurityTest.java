package dev.fenceline.transport.tcp;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.typesafe.config.ConfigFactory;
import dev.fenceline.Endpoint;
import dev.fenceline.EndpointFailedException;
import dev.fenceline.Fenceline;
import dev.fenceline.MemoryRegion;
import dev.fenceline.RemoteKey;
import dev.fenceline.Worker;
import java.io.IOException;
import java.io.InputStream;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.SocketTimeoutException;
import java.nio.ByteBuffer;
import java.util.Random;
import java.util.UUID;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.Timeout;

/**
 * Wireup refuses peers without the secret, and nothing a peer sends (garbage, oversized or
 * out-of-turn frames, silence) does more than close that one connection: the worker keeps serving.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class TcpWireupSecurityTest {
    private Fenceline server;
    private Worker target;
    private MemoryRegion region;
    private InetSocketAddress listening;

    @BeforeAll
    void start() throws Exception {
        server = Fenceline.create(TcpConfigs.loopback("127.0.0.1:0")
                .withFallback(ConfigFactory.parseString("fenceline.transport.tcp.connect-timeout = 1s")));
        target = await(server.newWorker("target"));
        region = target.allocate(4096);
        listening = TcpAddress.decode(target.address().transportAddress("tcp")).get(0);
    }

    @AfterAll
    void stop() throws InterruptedException {
        if (server != null) {
            server.close();
        }
        LeakGuard.assertNoLeaks();
    }

    /** Whatever a test did, a peer with the right secret still gets served. */
    @AfterEach
    void workerStillServes() throws Exception {
        try (Fenceline good = Fenceline.create(TcpConfigs.loopback("127.0.0.1:0"))) {
            Worker w = await(good.newWorker("good"));
            Endpoint ep = await(w.connect(target.address()));
            RemoteKey key = w.unpackRemoteKey(region.remoteKey().toBytes());
            long before = region.buffer().getLong(0);
            await(ep.atomicFetch64(dev.fenceline.AtomicOp.ADD, region.address(), key, 1));
            assertEquals(before + 1, region.buffer().getLong(0), "the worker must still apply operations");
        }
    }

    private static <T> T await(CompletionStage<T> s) throws Exception {
        return s.toCompletableFuture().get(30, TimeUnit.SECONDS);
    }

    @Test
    void aPeerWithTheWrongSecretIsRefused() throws Exception {
        try (Fenceline intruder = Fenceline.create(ConfigFactory.parseString(
                "fenceline.transport.tcp.secret = \"not-the-cluster-secret-at-all\"")
                .withFallback(TcpConfigs.loopback("127.0.0.1:0")))) {
            Worker w = await(intruder.newWorker("intruder"));
            ExecutionException e = assertThrows(ExecutionException.class, () -> await(w.connect(target.address())));
            EndpointFailedException f = assertInstanceOf(EndpointFailedException.class, e.getCause());
            assertTrue(f.getMessage().contains("authentication failed") || f.getMessage().contains("failed authentication"),
                    f.getMessage());
        }
    }

    @Test
    void aHelloForAnotherWorkerIsRefused() throws Exception {
        try (Socket s = connect()) {
            s.getOutputStream().write(frameBytes(FrameEncoder.hello(io.netty.buffer.UnpooledByteBufAllocator.DEFAULT,
                    UUID.randomUUID(), UUID.randomUUID(), Handshake.nonce())));
            byte[] reply = s.getInputStream().readAllBytes(); // REFUSE, then the server closes
            assertTrue(reply.length > 6 && reply[5] == Wire.REFUSE, "expected a REFUSE frame");
            assertTrue(new String(reply, 8, reply.length - 8, java.nio.charset.StandardCharsets.UTF_8)
                    .contains("no worker"));
        }
    }

    /** The server checks the proof itself: a client that skips its own check gets nowhere either. */
    @Test
    void aForgedProofIsRefusedByTheServer() throws Exception {
        try (Socket s = connect()) {
            s.getOutputStream().write(frameBytes(FrameEncoder.hello(io.netty.buffer.UnpooledByteBufAllocator.DEFAULT,
                    UUID.randomUUID(), target.address().workerId(), Handshake.nonce())));
            java.io.DataInputStream in = new java.io.DataInputStream(s.getInputStream());
            int length = in.readInt();
            byte[] challenge = new byte[length];
            in.readFully(challenge);
            assertEquals(Wire.CHALLENGE, challenge[1], "expected a CHALLENGE");
            s.getOutputStream().write(frameBytes(FrameEncoder.auth(io.netty.buffer.UnpooledByteBufAllocator.DEFAULT,
                    new byte[Wire.PROOF])));
            byte[] reply = in.readAllBytes();
            assertTrue(reply.length > 6 && reply[5] == Wire.REFUSE, "expected a REFUSE frame");
            assertTrue(new String(reply, 8, reply.length - 8, java.nio.charset.StandardCharsets.UTF_8)
                    .contains("authentication failed"));
        }
    }

    @Test
    void garbageClosesTheConnection() throws Exception {
        byte[] garbage = new byte[4096];
        new Random(7).nextBytes(garbage);
        assertClosedAfter(garbage);
    }

    @Test
    void anOversizedLengthClosesTheConnection() throws Exception {
        assertClosedAfter(ByteBuffer.allocate(8).putInt(Integer.MAX_VALUE).putInt(0).array());
    }

    @Test
    void anOperationBeforeTheHandshakeClosesTheConnection() throws Exception {
        assertClosedAfter(frameBytes(FrameEncoder.atomic(io.netty.buffer.UnpooledByteBufAllocator.DEFAULT, 1, 1, 0, 0,
                region.remoteKey().keyId(), region.address(), Wire.ATOMIC_POST, dev.fenceline.AtomicOp.ADD, 8, 1000,
                0)));
        assertEquals(0, region.buffer().getLong(0) / 1000, "an unauthenticated operation must not be applied");
    }

    @Test
    void aSilentPeerIsDroppedAfterTheHandshakeTimeout() throws Exception {
        assertClosedAfter(new byte[0]);
    }

    private Socket connect() throws IOException {
        Socket s = new Socket();
        s.connect(listening, 2000);
        s.setSoTimeout(10_000);
        return s;
    }

    /** Writes the bytes and expects the server to close the connection (EOF or reset) well in time. */
    private void assertClosedAfter(byte[] bytes) throws IOException {
        try (Socket s = connect()) {
            s.getOutputStream().write(bytes);
            s.getOutputStream().flush();
            InputStream in = s.getInputStream();
            try {
                while (in.read() >= 0) {
                    // drain whatever the server says before it closes
                }
            } catch (SocketTimeoutException e) {
                throw new AssertionError("the server kept the connection open after " + bytes.length + " bad bytes", e);
            } catch (IOException reset) {
                // a reset is a close too
            }
        }
    }

    private static byte[] frameBytes(io.netty.buffer.ByteBuf b) {
        try {
            byte[] out = new byte[b.readableBytes()];
            b.readBytes(out);
            return out;
        } finally {
            b.release();
        }
    }
}
