package dev.fenceline.transport.tcp;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.typesafe.config.Config;
import com.typesafe.config.ConfigFactory;
import dev.fenceline.AtomicOp;
import dev.fenceline.Endpoint;
import dev.fenceline.EndpointFailedException;
import dev.fenceline.Fenceline;
import dev.fenceline.MemoryRegion;
import dev.fenceline.RemoteKey;
import dev.fenceline.Worker;
import dev.fenceline.WorkerAddress;
import dev.fenceline.testkit.ModelCheckedWorkload;
import dev.fenceline.testkit.TestCertificates;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.Timeout;

/**
 * Mutual TLS between workers: PEM and PKCS#12 members talk; a peer whose certificate the cluster's
 * CA did not sign, and a peer without TLS, are refused while the target keeps serving; and a bit
 * flipped on the path breaks only the connection it hit, so the endpoint fails over to its other
 * rail and loses nothing.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class TcpTlsTest {
    private Path dir;
    private TestCertificates certs;
    private Fenceline server;
    private Worker target;
    private MemoryRegion region;

    @BeforeAll
    void start() throws Exception {
        dir = java.nio.file.Files.createTempDirectory("fenceline-tls-test");
        certs = TestCertificates.create(dir, "target", "origin");
        server = Fenceline.create(ConfigFactory.parseString("fenceline.transport.tcp.connect-timeout = 2s")
                .withFallback(certs.tcpConfig("target")).withFallback(TcpConfigs.tlsLoopback("127.0.0.1:0")));
        target = await(server.newWorker("target"));
        region = target.allocate(1 << 20);
    }

    @AfterAll
    void stop() throws InterruptedException {
        if (server != null) {
            server.close();
        }
        LeakGuard.assertNoLeaks();
    }

    private static <T> T await(CompletionStage<T> s) throws Exception {
        return s.toCompletableFuture().get(30, TimeUnit.SECONDS);
    }

    private static Config client(Config tls) {
        return ConfigFactory.parseString("fenceline.transport.tcp.connect-timeout = 2s").withFallback(tls)
                .withFallback(TcpConfigs.tlsLoopback("127.0.0.1:0"));
    }

    /** The transport ships BoringSSL for Linux x86-64, and tls.provider = auto picks it there. */
    @Test
    void theDefaultEngineIsBoringSslWhereItLoads() {
        assertTrue(io.netty.handler.ssl.OpenSsl.isAvailable(), "netty-tcnative: "
                + io.netty.handler.ssl.OpenSsl.unavailabilityCause());
        TcpSettings s = TcpSettings.fromSection(certs.tcpConfig("origin").withFallback(ConfigFactory
                .defaultReference()).resolve().getConfig(TcpSettings.SECTION));
        assertEquals("auto", s.security().tls().provider());
        assertEquals("mutual TLS [TLSv1.3] (openssl)", TlsContexts.create(s.security().tls(), "w",
                java.time.Duration.ofSeconds(1)).toString());
    }

    /** A member configured from PEM files reaches one configured from PKCS#12 stores; data and atomics arrive. */
    @Test
    void pemAndPkcs12MembersTalk() throws Exception {
        try (Fenceline f = Fenceline.create(client(certs.tcpPemConfig(certs.member("origin"))))) {
            assertServes(await(f.newWorker("origin")));
        }
    }

    private void assertServes(Worker w) throws Exception {
        Endpoint ep = await(w.connect(target.address()));
        RemoteKey key = w.unpackRemoteKey(region.remoteKey().toBytes());
        byte[] data = new byte[300_000];
        new Random(3).nextBytes(data);
        await(ep.put(ByteBuffer.wrap(data), region.address() + 64, key));
        ByteBuffer back = ByteBuffer.allocate(data.length);
        await(ep.get(back, region.address() + 64, key));
        assertArrayEquals(data, back.array());
        long before = region.buffer().getLong(0);
        assertEquals(before, (long) await(ep.atomicFetch64(AtomicOp.ADD, region.address(), key, 1)));
        assertEquals(before + 1, region.buffer().getLong(0));
    }

    @Test
    void aPeerWithACertificateTheCaDidNotSignIsRefused() throws Exception {
        try (Fenceline f = Fenceline.create(client(certs.tcpConfig(certs.untrusted("mallory"))))) {
            Worker w = await(f.newWorker("mallory"));
            ExecutionException e = assertThrows(ExecutionException.class, () -> await(w.connect(target.address())));
            assertInstanceOf(EndpointFailedException.class, e.getCause(), e.toString());
        }
        try (Fenceline f = Fenceline.create(client(certs.tcpConfig("origin")))) {
            assertServes(await(f.newWorker("origin")));
        }
    }

    /** The target does not trust a CA it was not given: a client with the right CA but an unknown one refuses it too. */
    @Test
    void aServerWithACertificateTheCaDidNotSignIsRefused() throws Exception {
        TestCertificates other = TestCertificates.create(dir.resolve("other"), "stranger");
        // The stranger trusts the cluster's CA but presents a certificate from another CA.
        Config stranger = ConfigFactory.parseMap(Map.of("fenceline.transport.tcp.tls.trust-store",
                certs.trustStore().toString(), "fenceline.transport.tcp.tls.trust-store-password", certs.password(),
                "fenceline.transport.tcp.tls.key-store-password", other.password()))
                .withFallback(other.tcpConfig("stranger"));
        try (Fenceline f = Fenceline.create(client(stranger))) {
            Worker w = await(f.newWorker("stranger"));
            ExecutionException e = assertThrows(ExecutionException.class, () -> await(w.connect(target.address())));
            assertInstanceOf(EndpointFailedException.class, e.getCause(), e.toString());
            Throwable t = e.getCause();
            while (t != null && !(t instanceof javax.net.ssl.SSLException)) {
                t = t.getCause();
            }
            assertTrue(t != null, "the handshake's own exception is among the causes, for the caller to inspect: "
                    + e.getCause());
        }
    }

    @Test
    void aPeerWithoutTlsIsRefused() throws Exception {
        try (Fenceline f = Fenceline.create(ConfigFactory.parseString("fenceline.transport.tcp.connect-timeout = 2s")
                .withFallback(TcpConfigs.loopback("127.0.0.1:0")))) {
            Worker w = await(f.newWorker("plain"));
            ExecutionException e = assertThrows(ExecutionException.class, () -> await(w.connect(target.address())));
            assertInstanceOf(EndpointFailedException.class, e.getCause(), e.toString());
        }
    }

    /**
     * Workers whose security differs are told which setting it is: the TLS target finds the secret
     * peer's HELLO is not TLS, and a secret target finds a TLS record where a frame length belongs
     * (rather than a frame of hundreds of MB over limits.pre-auth-frame).
     */
    @Test
    void peersWhoseSecurityDiffersAreToldWhichSettingItIs() throws Exception {
        try (CapturedLog seen = CapturedLog.of(TargetHandler.class);
                Fenceline secret = Fenceline.create(ConfigFactory.parseString(
                "fenceline.transport.tcp.connect-timeout = 2s").withFallback(TcpConfigs.loopback("127.0.0.1:0")));
                Fenceline tls = Fenceline.create(client(certs.tcpConfig("origin")))) {
            Worker plain = await(secret.newWorker("plain"));
            assertThrows(ExecutionException.class, () -> await(plain.connect(target.address())));
            assertLogged(seen, "tcp target: closing connection from", "fenceline.transport.tcp.security = tls");
            Worker origin = await(tls.newWorker("origin"));
            assertThrows(ExecutionException.class, () -> await(origin.connect(plain.address())));
            assertLogged(seen, "tcp plain: closing connection from", "the peer speaks TLS");
            assertLogged(seen, "tcp plain: closing connection from", "fenceline.transport.tcp.security = secret");
        }
    }

    private static void assertLogged(CapturedLog seen, String prefix, String words) throws InterruptedException {
        long until = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        List<String> lines;
        do {
            lines = seen.messages();
            if (lines.stream().anyMatch(l -> l.startsWith(prefix) && l.contains(words))) {
                return;
            }
            Thread.sleep(20);
        } while (System.nanoTime() < until);
        throw new AssertionError("no warning starting '" + prefix + "' names '" + words + "': " + lines);
    }

    /**
     * A bit flipped on rail 0's path while a model-checked workload runs: TLS finds the record
     * broken, that connection ends, the endpoint goes on over rail 1 (0 lost, 0 doubled, fences
     * held), and rail 0 comes back.
     */
    @Test
    void aFlippedBitBreaksOnlyItsConnectionAndTheEndpointFailsOver() throws Exception {
        long seed = Long.getLong("fenceline.test.seed", 20261201L);
        System.out.printf("TcpTlsTest seed %d: reproduce with -Dtest=TcpTlsTest -Dfenceline.test.seed=%d%n", seed,
                seed);
        Config both = ConfigFactory.parseString("""
                fenceline.endpoint.keepalive { interval = 100ms, timeout = 1s }
                fenceline.transport.tcp.connect-timeout = 2s
                fenceline.transport.tcp.reconnect { min-backoff = 20ms, max-backoff = 200ms }
                """).withFallback(certs.tcpConfig("origin")).withFallback(TcpConfigs.tlsLoopback("127.0.0.1:0",
                "127.0.0.2:0"));
        try (Fenceline f = Fenceline.create(both)) {
            Worker a = await(f.newWorker("origin"));
            Worker b = await(f.newWorker("target2"));
            int slice = 256 << 10;
            MemoryRegion data = b.allocate(slice);
            MemoryRegion counters = b.allocate(16 * 8L);
            List<InetSocketAddress> rails = TcpAddress.decode(b.address().transportAddress("tcp"));
            try (LoopbackProxy relay = new LoopbackProxy("127.0.0.3", rails.get(0))) {
                WorkerAddress viaRelay = Lanes.through(b, relay.address(), rails.get(1));
                Endpoint ep = await(a.connect(viaRelay));
                assertEquals(2, ep.lanes().size(), ep.lanes().toString());
                long firstConnection = ep.lanes().get(0).connectionId();
                ModelCheckedWorkload w = new ModelCheckedWorkload(ep, new ModelCheckedWorkload.Options(data,
                        a.unpackRemoteKey(data.remoteKey().toBytes()), 0, slice, counters,
                        a.unpackRemoteKey(counters.remoteKey().toBytes()), 0, 16, 7, seed, 64, true));
                b.setActiveMessageHandler(7, w.activeMessageHandler());
                CompletableFuture<ModelCheckedWorkload.Result> run = w.start(4000);
                Thread.sleep(200); // the workload is under way
                relay.flipOneBit();
                Lanes.awaitLaneZero(ep, l -> l.connectionId() != firstConnection && l.live(), "lane 0 to fail and recover");
                ModelCheckedWorkload.Result r = run.get(90, TimeUnit.SECONDS);
                assertEquals(List.of(), r.errors(), "seed " + seed);
                assertTrue(r.checks() > 0 && r.operations() > 2000, r.toString());
                var stats = a.statistics();
                assertEquals(0, stats.failed(), stats.toString());
                assertEquals(0, stats.outstanding(), stats.toString());
                assertTrue(stats.reconfigurations() >= 2, "a failure and a recovery: " + stats);
            }
        }
    }
}
