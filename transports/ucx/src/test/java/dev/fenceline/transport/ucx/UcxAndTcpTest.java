package dev.fenceline.transport.ucx;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.typesafe.config.ConfigFactory;
import dev.fenceline.Endpoint;
import dev.fenceline.EndpointFailedException;
import dev.fenceline.EndpointStatistics;
import dev.fenceline.Fenceline;
import dev.fenceline.LaneInfo;
import dev.fenceline.LaneStatistics;
import dev.fenceline.MemoryRegion;
import dev.fenceline.RemoteKey;
import dev.fenceline.Worker;
import dev.fenceline.testkit.ModelCheckedWorkload;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * An endpoint with a UCT lane and a Fenceline tcp lane standing by: the UCT lane's channel fails in
 * the middle of a model-checked workload (as when UCT reports its peer failed) and the endpoint goes
 * on over tcp. Nothing is lost, applied twice or out of fence order, and nothing is reported unknown:
 * a message or atomic in flight on the failed lane is sent again over tcp, and the target's worker
 * recognizes the copy in the window both transports share (with the ucx target keeping windows of
 * its own, the handler ran a message twice and atomics applied twice in 2 of 4 rounds). Rounds with
 * seeds in a row, each printed. And the failed UCT lane is reconnected and carries traffic again.
 */
@Timeout(value = 300, unit = TimeUnit.SECONDS)
class UcxAndTcpTest {
    private static final String SECRET = "0123456789abcdef0123456789abcdef";

    @BeforeAll
    static void ucx() {
        UcxAssumptions.ucxAvailable();
    }

    private static <T> T await(CompletionStage<T> s) throws Exception {
        return s.toCompletableFuture().get(20, TimeUnit.SECONDS);
    }

    @Test
    void anEndpointFailsOverFromAUctLaneToATcpLaneExactlyOnce() throws Exception {
        assertEquals(List.of(), rounds("posix", 20261202L, 3));
    }

    /**
     * Rounds with seeds in a row ({@code fenceline.test.seed} and {@code fenceline.test.rounds}
     * override the defaults), each printed.
     *
     * @return what went wrong, per seed
     */
    private static List<String> rounds(String tl, long defaultSeed, int defaultRounds) throws Exception {
        long seed = Long.getLong("fenceline.test.seed", defaultSeed);
        int rounds = Integer.getInteger("fenceline.test.rounds", defaultRounds);
        System.out.printf("UcxAndTcpTest (UCT %s) seeds %d to %d: reproduce one with -Dtest=UcxAndTcpTest"
                + " -Dfenceline.test.seed=S -Dfenceline.test.rounds=1%n", tl, seed, seed + rounds - 1);
        List<String> bad = new ArrayList<>();
        for (int i = 0; i < rounds; i++) {
            String problem = round(seed + i, tl);
            if (problem != null) {
                bad.add("seed " + (seed + i) + ": " + problem);
            }
        }
        return bad;
    }

    /**
     * The same over a UCT tcp lane, whose every operation is a software request: the calling threads
     * post short operations on it themselves while the endpoint is idle, and those it had unanswered
     * when its channel failed are given back and restarted over tcp under the same numbers.
     */
    @Test
    void anEndpointFailsOverFromAUctTcpLaneWithPostedOperationsExactlyOnce() throws Exception {
        assertEquals(List.of(), rounds("tcp", 20261203L, 2));
    }

    private static String round(long seed, String tl) throws Exception {
        try (Fenceline f = Fenceline.create(ConfigFactory.parseString("""
                fenceline.transports = [ucx, tcp]
                fenceline.endpoint.lane-transports = all
                fenceline.endpoint.keepalive { interval = 100ms, timeout = 1s }
                fenceline.transport.ucx.tls = [%s]
                fenceline.transport.ucx.devices = [%s]
                fenceline.transport.ucx.tcp-unchecked-writes = accept
                fenceline.transport.tcp.listen = ["127.0.0.1:0"]
                fenceline.transport.tcp.secret = "%s"
                """.formatted(tl, tl.equals("tcp") ? "lo" : "all", SECRET)))) {
            Worker a = await(f.newWorker("origin"));
            Worker b = await(f.newWorker("target"));
            MemoryRegion data = b.allocate(256 << 10);
            MemoryRegion counters = b.allocate(16 * 8L);
            Endpoint ep = await(a.connect(b.address()));
            assertEquals(List.of("ucx", "tcp"), ep.lanes().stream().map(LaneInfo::transport).toList(),
                    ep.lanes().toString());
            ModelCheckedWorkload w = new ModelCheckedWorkload(ep, new ModelCheckedWorkload.Options(data,
                    a.unpackRemoteKey(data.remoteKey().toBytes()), 0, (int) data.length(), counters,
                    a.unpackRemoteKey(counters.remoteKey().toBytes()), 0, 16, 7, seed, 64, true));
            b.setActiveMessageHandler(7, w.activeMessageHandler());
            CompletableFuture<ModelCheckedWorkload.Result> run = w.start(10_000);
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
            while (ep.statistics().operations() < 2000 && !run.isDone() && System.nanoTime() < deadline) {
                Thread.onSpinWait();
            }
            assertTrue(!run.isDone(), "the workload ended before the UCT lane could fail: " + ep.statistics());
            assertEquals(0, operations(ep.statistics(), "tcp"), "tcp stands by while ucx serves");
            long beforeFailure = ep.statistics().operations();
            UcxLane uct = UcxLane.byId(ep.lanes().get(0).connectionId());
            assertNotNull(uct, "the UCT lane is live");
            uct.breakChannel(new EndpointFailedException("test: UCT reported the peer failed"));
            ModelCheckedWorkload.Result r;
            try {
                r = run.get(60, TimeUnit.SECONDS);
            } catch (java.util.concurrent.TimeoutException e) {
                return "the workload did not finish: " + ep.statistics();
            }
            EndpointStatistics after = ep.statistics();
            System.out.printf("UcxAndTcpTest: seed %d: %s; %d calls failed, %d restarts; %d operations before the UCT"
                    + " lane failed, tcp carried %d%n", seed, r, after.failed(), a.statistics().restarts(), beforeFailure,
                    operations(after, "tcp"));
            if (!r.errors().isEmpty()) {
                return "lost, doubled, reordered or unknown: " + r.errors() + " in " + r;
            }
            assertTrue(operations(after, "tcp") > 0, "traffic moved to tcp: " + after.lanes());
            assertEquals(0, after.outstanding(), after.toString());
            return null;
        }
    }

    /** @return a runtime whose endpoints hold a UCT posix lane, reconnected with this backoff, and a tcp lane */
    private static Fenceline reconnectingPosixAndTcp(String minBackoff, String maxBackoff) {
        return Fenceline.create(ConfigFactory.parseString("""
                fenceline.transports = [ucx, tcp]
                fenceline.endpoint.lane-transports = all
                fenceline.transport.ucx.tls = [posix]
                fenceline.transport.ucx.reconnect { min-backoff = %s, max-backoff = %s }
                fenceline.transport.tcp.listen = ["127.0.0.1:0"]
                fenceline.transport.tcp.secret = "%s"
                """.formatted(minBackoff, maxBackoff, SECRET)));
    }

    @Test
    void aFailedUctLaneIsReconnectedAndCarriesTrafficAgain() throws Exception {
        try (Fenceline f = reconnectingPosixAndTcp("50ms", "200ms")) {
            Worker a = await(f.newWorker("origin"));
            Worker b = await(f.newWorker("target"));
            MemoryRegion counters = b.allocate(64);
            RemoteKey key = a.unpackRemoteKey(counters.remoteKey().toBytes());
            Endpoint ep = await(a.connect(b.address()));
            long first = ep.lanes().get(0).connectionId();
            UcxLane uct = UcxLane.byId(first);
            assertNotNull(uct, "the UCT lane is live");
            uct.breakChannel(new EndpointFailedException("test: UCT reported the peer failed"));
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
            long adds = 0;
            while (!(ep.lanes().get(0).live() && ep.lanes().get(0).connectionId() != first)) {
                assertTrue(System.nanoTime() < deadline, "the UCT lane was not reconnected: " + ep.lanes());
                await(ep.atomicFetch64(dev.fenceline.AtomicOp.ADD, counters.address(), key, 1)); // goes on meanwhile
                adds++;
            }
            // Live in the table first; it takes operations once its replay is done and it is ready, which
            // under load can take longer than a hundred fetch-adds over tcp (it failed so in a full run).
            // Once the endpoint is idle on it, the UCT lane may take them on the fast path by grant (tcp
            // has none), where they count as the endpoint's fast-path operations, not the lane's.
            long before = uctCarried(ep.statistics());
            deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
            while (uctCarried(ep.statistics()) <= before) {
                assertTrue(System.nanoTime() < deadline, "the reconnected lane carries traffic: "
                        + ep.statistics());
                await(ep.atomicFetch64(dev.fenceline.AtomicOp.ADD, counters.address(), key, 1));
                adds++;
            }
            assertEquals(adds, counters.buffer().order(ByteOrder.nativeOrder()).getLong(0));
        }
    }

    /**
     * While the UCT lane is down, calling threads post their operations on the tcp standby; when the
     * UCT lane comes back, a get done directly on it must not pass a put posted on tcp before a fence
     * (a caller's fence never reaches the actor). {@link StaleReads} steps on through 32 failures and
     * reconnects. Before the grant waited for the posted answers, it found stale reads in 3 runs of 3
     * (and GrantPolicyTest's case every time).
     */
    @Test
    void aReconnectedUctLaneTakesDirectGetsOnlyAfterWhatWasPostedOnTcpBeforeThem() throws Exception {
        try (Fenceline f = reconnectingPosixAndTcp("20ms", "50ms")) {
            Worker a = await(f.newWorker("origin"));
            Worker b = await(f.newWorker("target"));
            MemoryRegion region = b.allocate(8L * StaleReads.WORDS);
            Endpoint ep = await(a.connect(b.address()));
            StaleReads reads = new StaleReads(ep, region.address(), a.unpackRemoteKey(region.remoteKey().toBytes()));
            for (int recovery = 0; recovery < 32; recovery++) {
                long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
                UcxLane uct;
                while ((uct = liveUctLane(ep)) == null) { // reconnected in the table, perhaps not ready yet
                    assertTrue(System.nanoTime() < deadline, "the UCT lane was not reconnected: " + ep.lanes());
                    reads.step();
                }
                uct.breakChannel(new EndpointFailedException("test: UCT reported the peer failed"));
                UcxLane failed = uct;
                while (liveUctLane(ep) == null || liveUctLane(ep) == failed) {
                    assertTrue(System.nanoTime() < deadline, "the UCT lane was not reconnected: " + ep.lanes());
                    reads.step();
                }
                long fast = ep.statistics().fastPath();
                while (ep.statistics().fastPath() < fast + 1000) { // a while on the reconnected lane, and after
                    assertTrue(System.nanoTime() < deadline, "no fast path: " + ep.statistics());
                    reads.step();
                }
            }
            List<String> wrong = reads.finish();
            assertEquals(List.of(), wrong.subList(0, Math.min(wrong.size(), 5)), wrong.size() + " stale reads in "
                    + reads.steps + " steps");
            assertEquals(0, a.statistics().failed(), a.statistics().toString());
        }
    }

    /** @return the endpoint's UCT lane if the table has it live and its transport knows it, else null */
    private static UcxLane liveUctLane(Endpoint ep) {
        LaneInfo l = ep.lanes().get(0);
        return l.live() ? UcxLane.byId(l.connectionId()) : null;
    }

    /**
     * Steps that each put their number into one of 64 words, fence, and read back the word an earlier
     * step wrote (1 to 16 steps back), with up to 64 operations out.
     */
    private static final class StaleReads {
        static final int WORDS = 64;
        private final Endpoint ep;
        private final long base;
        private final RemoteKey key;
        private final ArrayDeque<CompletableFuture<?>> out = new ArrayDeque<>();
        private final List<String> wrong = Collections.synchronizedList(new ArrayList<>());
        long steps;

        StaleReads(Endpoint ep, long base, RemoteKey key) {
            this.ep = ep;
            this.base = base;
            this.key = key;
        }

        void step() throws Exception {
            long step = ++steps;
            ByteBuffer v = ByteBuffer.allocateDirect(8).order(ByteOrder.nativeOrder());
            v.putLong(0, step);
            out.add(ep.put(v, base + 8 * (step % WORDS), key).toCompletableFuture());
            ep.fence();
            long earlier = step - 1 - step % 16;
            if (earlier > 0) {
                ByteBuffer got = ByteBuffer.allocateDirect(8).order(ByteOrder.nativeOrder());
                out.add(ep.get(got, base + 8 * (earlier % WORDS), key).toCompletableFuture().thenRun(() -> {
                    if (got.getLong(0) != earlier) {
                        wrong.add("step " + step + " read " + got.getLong(0) + " where step " + earlier + " wrote");
                    }
                }));
            }
            while (out.size() > 64) {
                out.poll().get(20, TimeUnit.SECONDS);
            }
        }

        /** @return the stale reads, once every operation completed */
        List<String> finish() throws Exception {
            for (CompletableFuture<?> c : out) {
                c.get(20, TimeUnit.SECONDS);
            }
            await(ep.flush());
            return List.copyOf(wrong);
        }
    }

    /** @return operations the UCT lane carried: posted on it, or done on the fast path, which only it offers */
    private static long uctCarried(EndpointStatistics s) {
        return operations(s, "ucx") + s.fastPath();
    }

    private static long operations(EndpointStatistics s, String transport) {
        return s.lanes().stream().filter(l -> l.transport().equals(transport)).mapToLong(LaneStatistics::operations)
                .sum();
    }
}
