package dev.fenceline.transport.tcp;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.typesafe.config.ConfigFactory;
import dev.fenceline.Endpoint;
import dev.fenceline.Fenceline;
import dev.fenceline.MemoryRegion;
import dev.fenceline.Worker;
import dev.fenceline.WorkerAddress;
import dev.fenceline.testkit.ModelCheckedWorkload;
import java.net.InetSocketAddress;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Rail failover on one host: rail 0 of a two-rail endpoint runs through a relay that the test cuts
 * (connections reset) or turns into a black hole (found only by the keepalive) while a
 * model-checked workload runs; the workload must verify, the endpoint must fail over to rail 1,
 * and rail 0 must come back as a recovered lane once the path heals. The seed is printed.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class TcpFailoverTest {
    private static final int SLICE = 256 << 10;
    private static final int COUNTERS = 16;

    @AfterAll
    static void noLeaks() throws InterruptedException {
        LeakGuard.assertNoLeaks();
    }

    @ParameterizedTest(name = "{0}")
    @ValueSource(strings = {"cut", "black-hole"})
    void railZeroFailsOverAndRecovers(String fault) throws Exception {
        long seed = Long.getLong("fenceline.test.seed", 20261129L);
        int ops = Integer.getInteger("fenceline.test.ops", 6000);
        System.out.printf("TcpFailoverTest %s seed %d: reproduce with -Dtest=TcpFailoverTest"
                + " -Dfenceline.test.seed=%d%n", fault, seed, seed);
        try (Fenceline f = Fenceline.create(ConfigFactory.parseString("""
                fenceline.endpoint.keepalive { interval = 100ms, timeout = 1s }
                fenceline.transport.tcp.connect-timeout = 1s
                fenceline.transport.tcp.reconnect { min-backoff = 20ms, max-backoff = 200ms }
                """).withFallback(TcpConfigs.loopback("127.0.0.1:0", "127.0.0.2:0")))) {
            Worker a = f.newWorker("origin").toCompletableFuture().get(10, TimeUnit.SECONDS);
            Worker b = f.newWorker("target").toCompletableFuture().get(10, TimeUnit.SECONDS);
            MemoryRegion data = b.allocate(SLICE);
            MemoryRegion counters = b.allocate(COUNTERS * 8L);
            List<InetSocketAddress> rails = TcpAddress.decode(b.address().transportAddress("tcp"));
            try (LoopbackProxy relay = new LoopbackProxy("127.0.0.3", rails.get(0))) {
                WorkerAddress viaRelay = Lanes.through(b, relay.address(), rails.get(1));
                Endpoint ep = a.connect(viaRelay).toCompletableFuture().get(10, TimeUnit.SECONDS);
                assertEquals(2, ep.lanes().size(), ep.lanes().toString());
                long firstConnection = ep.lanes().get(0).connectionId();
                ModelCheckedWorkload w = new ModelCheckedWorkload(ep, new ModelCheckedWorkload.Options(data,
                        a.unpackRemoteKey(data.remoteKey().toBytes()), 0, SLICE, counters,
                        a.unpackRemoteKey(counters.remoteKey().toBytes()), 0, COUNTERS, 7, seed, 64, true));
                b.setActiveMessageHandler(7, w.activeMessageHandler());
                CompletableFuture<ModelCheckedWorkload.Result> run = w.start(ops);
                Thread.sleep(200);
                if (fault.equals("cut")) {
                    relay.cut();
                } else {
                    relay.blackHole();
                }
                Lanes.awaitLaneZero(ep, l -> !l.live(), "lane 0 to fail");
                relay.heal();
                Lanes.awaitLaneZero(ep, l -> l.live() && l.connectionId() != firstConnection, "lane 0 to recover");
                ModelCheckedWorkload.Result r = run.get(90, TimeUnit.SECONDS);
                assertEquals(List.of(), r.errors(), "seed " + seed);
                assertTrue(r.checks() > 0 && r.operations() > ops / 2, r.toString());
                assertNotEquals(firstConnection, ep.lanes().get(0).connectionId());
                var stats = a.statistics();
                assertEquals(0, stats.failed(), stats.toString());
                assertEquals(0, stats.outstanding(), stats.toString());
                assertTrue(stats.reconfigurations() >= 2, "a failure and a recovery: " + stats);
            }
        }
    }
}
