package dev.fenceline.cluster;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.fenceline.Endpoint;
import dev.fenceline.EndpointFailedException;
import dev.fenceline.Fenceline;
import dev.fenceline.LaneInfo;
import dev.fenceline.OutcomeUnknownException;
import dev.fenceline.RemoteAccessException;
import dev.fenceline.RemoteKey;
import dev.fenceline.Worker;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import org.apache.pekko.actor.Address;
import org.apache.pekko.actor.AddressFromURIString;
import org.apache.pekko.actor.typed.ActorRef;
import org.apache.pekko.actor.typed.ActorSystem;
import org.apache.pekko.actor.typed.javadsl.Behaviors;
import org.apache.pekko.actor.typed.receptionist.Receptionist;
import org.apache.pekko.cluster.MemberStatus;
import org.apache.pekko.cluster.typed.Cluster;
import org.apache.pekko.cluster.typed.Join;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.TestMethodOrder;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * Three members in three JVMs on loopback: this test's JVM (member A, worker {@code a}) and two
 * forked {@link ClusterMember}s (B and C, each with worker {@code kv}). Discovery, region lookup by
 * name, serializers through Artery, membership failing endpoints (C stopped with SIGSTOP, so only
 * the cluster's failure detector and downing can tell: its sockets stay open and keepalive waits a
 * minute), and a restarted C that gets a new endpoint. The steps build on each other, in order.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class MembershipTest {
    private static final long WAIT_S = 30;

    private Path logs;

    private ActorSystem<Void> system;
    private FencelineCluster cluster;
    private Worker a;
    private final LinkedBlockingQueue<Object> collected = new LinkedBlockingQueue<>();
    private Member b;
    private Member c;

    /** A forked member: its process and what it printed. */
    private record Member(Process process, Address address, long uid, Path log) {
        /** SIGKILL, and wait for it to be gone. */
        void close() throws InterruptedException {
            process.destroyForcibly();
            process.waitFor(10, TimeUnit.SECONDS);
        }
    }

    private Member fork(String name, int port) throws IOException {
        Path log = logs.resolve(name + ".log");
        List<String> cmd = List.of(Path.of(System.getProperty("java.home"), "bin", "java").toString(), "-Xmx256m",
                "--add-exports", "java.base/jdk.internal.misc=ALL-UNNAMED", "-cp", System.getProperty("java.class.path"), ClusterMember.class.getName(),
                Cluster.get(system).selfMember().address().toString(), Integer.toString(port));
        Process p = new ProcessBuilder(cmd).redirectError(log.toFile()).start();
        BufferedReader out = new BufferedReader(new InputStreamReader(p.getInputStream(), StandardCharsets.UTF_8));
        String line;
        while ((line = out.readLine()) != null && !line.startsWith("MEMBER ")) {
            // skip
        }
        if (line == null) {
            p.destroyForcibly();
            throw new AssertionError("member " + name + " did not start; its log:\n" + Files.readString(log));
        }
        String[] parts = line.split(" ");
        return new Member(p, AddressFromURIString.parse(parts[1]), Long.parseLong(parts[2]), log);
    }

    private static <T> T await(CompletionStage<T> s) throws Exception {
        return s.toCompletableFuture().get(WAIT_S, TimeUnit.SECONDS);
    }

    private static ByteBuffer word(long v) {
        return ByteBuffer.allocateDirect(8).order(ByteOrder.nativeOrder()).putLong(0, v);
    }

    @BeforeAll
    void startThreeMembers(@TempDir Path dir) throws Exception {
        logs = dir;
        system = ActorSystem.create(Behaviors.setup(ctx -> {
            ActorRef<Object> collector = ctx.spawn(Behaviors.receive(Object.class).onAnyMessage(m -> {
                collected.add(m);
                return Behaviors.same();
            }).build(), "collector");
            ctx.getSystem().receptionist().tell(Receptionist.register(ClusterMember.COLLECTOR, collector));
            return Behaviors.empty();
        }), "fenceline-test", ClusterMember.config(null, 0));
        Cluster.get(system).manager().tell(Join.create(Cluster.get(system).selfMember().address()));
        cluster = FencelineCluster.get(system);
        a = await(Fenceline.get(system).newWorker("a"));
        b = fork("b", 0);
        c = fork("c", 0);
    }

    @AfterAll
    void stopAll() throws Exception {
        try {
            for (Member m : new Member[] {b, c}) {
                if (m != null) {
                    m.close();
                }
            }
        } finally {
            system.terminate();
            system.getWhenTerminated().toCompletableFuture().get(WAIT_S, TimeUnit.SECONDS);
        }
    }

    @Test
    @Order(1)
    void everyMemberSeesTheOthersWorkersAndIsReady() throws Exception {
        ClusterWorker self = await(cluster.advertise(a));
        assertEquals(Cluster.get(system).selfMember().address(), self.member());
        ClusterWorker kvB = await(cluster.worker(b.address(), "kv"));
        ClusterWorker kvC = await(cluster.worker(c.address(), "kv"));
        assertEquals(c.uid(), kvC.incarnation(), "the incarnation is the member's uid");
        assertNotEquals(kvB.address().workerId(), kvC.address().workerId());
        assertEquals(3, cluster.workers().size(), cluster.workers().toString());
        assertTrue(cluster.isReady(), "up, and its worker is listed");
        assertTrue(new FencelineReadinessCheck(org.apache.pekko.actor.typed.javadsl.Adapter.toClassic(system)).get()
                .toCompletableFuture().get(), "the Pekko Management check says the same");
        CompletionException unknown = assertThrows(CompletionException.class,
                () -> cluster.worker(b.address(), "nobody").toCompletableFuture().join());
        assertTrue(unknown.getCause().getMessage().contains("no worker 'nobody'"), unknown.getCause().getMessage());
    }

    @Test
    @Order(2)
    void aRegionIsLookedUpByNameAndWrittenWithRma() throws Exception {
        ClusterWorker kvB = await(cluster.worker(b.address(), "kv"));
        RemoteKey key = await(cluster.lookup(a, kvB, "table"));
        assertEquals(kvB.address().workerId(), key.ownerId());
        Endpoint ep = await(cluster.connect(a, kvB));
        assertTrue(ep == await(cluster.connect(a, b.address(), "kv")), "one shared endpoint per pair of workers");
        await(ep.put(word(42), key.baseAddress() + 16, key));
        ByteBuffer back = ByteBuffer.allocateDirect(8).order(ByteOrder.nativeOrder());
        await(ep.get(back, key.baseAddress() + 16, key));
        assertEquals(42, back.getLong(0));
        CompletionException none = assertThrows(CompletionException.class,
                () -> cluster.lookup(a, kvB, "no-such-table").toCompletableFuture().join());
        RemoteAccessException e = assertInstanceOf(RemoteAccessException.class, none.getCause());
        assertEquals(RemoteAccessException.Reason.UNKNOWN_KEY, e.reason());
        assertTrue(e.getMessage().contains("no-such-table"), e.getMessage());

        // A region published after its worker was advertised, then withdrawn.
        dev.fenceline.MemoryRegion mine = a.allocate(64);
        ClusterWorker self = await(cluster.worker(Cluster.get(system).selfMember().address(), "a"));
        await(cluster.publish(a, "late", mine));
        assertEquals(mine.remoteKey(), await(cluster.lookup(a, self, "late")));
        await(cluster.unpublish(a, "late"));
        CompletionException withdrawn = assertThrows(CompletionException.class,
                () -> cluster.lookup(a, self, "late").toCompletableFuture().join());
        assertInstanceOf(RemoteAccessException.class, withdrawn.getCause());
        assertThrows(IllegalArgumentException.class, () -> cluster.publish(a, "b's", b2Region(kvB)),
                "a region of another worker is refused");
    }

    private dev.fenceline.MemoryRegion b2Region(ClusterWorker notMine) throws Exception {
        Worker other = await(Fenceline.get(system).newWorker("other"));
        assertNotEquals(notMine.address().workerId(), other.address().workerId());
        return other.allocate(64);
    }

    @Test
    @Order(3)
    void addressesAndKeysRoundTripThroughArtery() throws Exception {
        ClusterWorker kvB = await(cluster.worker(b.address(), "kv"));
        RemoteKey key = await(cluster.lookup(a, kvB, "table"));
        ActorRef<Object> echo = null;
        long until = System.nanoTime() + TimeUnit.SECONDS.toNanos(WAIT_S);
        while (echo == null && System.nanoTime() < until) {
            Receptionist.Listing l = await(org.apache.pekko.actor.typed.javadsl.AskPattern.ask(system.receptionist(),
                    r -> Receptionist.find(ClusterMember.ECHO, r), java.time.Duration.ofSeconds(5), system.scheduler()));
            echo = l.getServiceInstances(ClusterMember.ECHO).stream()
                    .filter(ref -> ref.path().address().equals(b.address())).findFirst().orElse(null);
        }
        assertNotNull(echo, "member b's echo actor is listed");
        // The collector is listed at b only after the receptionist spread it: resend until it comes back.
        Object back = null;
        while (back == null && System.nanoTime() < until) {
            echo.tell(kvB.address());
            back = collected.poll(200, TimeUnit.MILLISECONDS);
        }
        assertEquals(kvB.address(), back, "a WorkerAddress, there and back");
        collected.clear();
        echo.tell(key);
        Object k = collected.poll(WAIT_S, TimeUnit.SECONDS);
        assertEquals(key, k, "a RemoteKey, there and back");
    }

    @Test
    @Order(4)
    void aStoppedMemberIsDownedAndItsEndpointsFailWithinTheDowningTimeNotTheKeepalive() throws Exception {
        ClusterWorker kvC = await(cluster.worker(c.address(), "kv"));
        RemoteKey key = await(cluster.lookup(a, kvC, "table"));
        Endpoint ep = await(cluster.connect(a, kvC));
        await(ep.put(word(1), key.baseAddress(), key));

        long stopped = System.nanoTime();
        dev.fenceline.testkit.ProcessFaults.stop(c.process(), java.time.Duration.ofSeconds(10));
        List<CompletableFuture<Void>> sent = new ArrayList<>();
        for (int i = 0; i < 8; i++) {
            sent.add(ep.put(word(100 + i), key.baseAddress() + 8L * i, key).toCompletableFuture());
        }
        while (ep.lanes().stream().anyMatch(LaneInfo::live) && System.nanoTime() - stopped < TimeUnit.SECONDS.toNanos(WAIT_S)) {
            Thread.sleep(20); // polling from the test's thread, not an actor
        }
        long failedAfterMs = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - stopped);
        System.out.printf("membership: a stopped member's endpoint failed %d ms after SIGSTOP (failure detector"
                + " pause 1 s + split-brain resolver stable-after 2 s; endpoint keepalive 60 s)%n", failedAfterMs);
        assertFalse(ep.lanes().stream().anyMatch(LaneInfo::live), "the endpoint failed: " + ep.lanes());
        assertTrue(failedAfterMs < 15_000, "within the downing time, far below the keepalive: " + failedAfterMs + " ms");
        for (int i = 0; i < sent.size(); i++) {
            CompletableFuture<Void> f = sent.get(i);
            ExecutionException e = assertThrows(ExecutionException.class, () -> f.get(WAIT_S, TimeUnit.SECONDS),
                    "put " + i + " was answered by a stopped member; endpoint " + ep.lanes() + " " + ep.statistics());
            assertInstanceOf(OutcomeUnknownException.class, e.getCause(),
                    "written to the stopped member's socket: it may still apply them");
        }
        ExecutionException later = assertThrows(ExecutionException.class,
                () -> ep.put(word(9), key.baseAddress(), key).toCompletableFuture().get(WAIT_S, TimeUnit.SECONDS));
        assertInstanceOf(EndpointFailedException.class, later.getCause());
        assertTrue(later.getCause().getMessage().contains("cluster member " + c.address() + " was"),
                later.getCause().getMessage());
        CompletionException refused = assertThrows(CompletionException.class,
                () -> cluster.connect(a, kvC).toCompletableFuture().join());
        assertInstanceOf(EndpointFailedException.class, refused.getCause(), "no endpoint to a gone incarnation");
    }

    @Test
    @Order(5)
    void aRestartedMemberIsANewIncarnationAndGetsANewEndpoint() throws Exception {
        ClusterWorker old = cluster.workers().stream().filter(w -> w.member().equals(c.address())).findFirst()
                .orElse(null);
        assertEquals(null, old, "the downed member's worker is no longer listed");
        int port = c.address().getPort().get();
        c.close(); // SIGKILL
        c = fork("c2", port);
        assertEquals(port, c.address().getPort().get());
        ClusterWorker kvC = await(cluster.worker(c.address(), "kv"));
        assertEquals(c.uid(), kvC.incarnation(), "the new incarnation's worker");
        Endpoint ep = await(cluster.connect(a, kvC));
        assertEquals(kvC.address().workerId(), ep.peer().workerId());
        RemoteKey key = await(cluster.lookup(a, kvC, "table"));
        await(ep.put(word(7), key.baseAddress(), key));
        ByteBuffer back = ByteBuffer.allocateDirect(8).order(ByteOrder.nativeOrder());
        await(ep.get(back, key.baseAddress(), key));
        assertEquals(7, back.getLong(0));
        assertEquals(MemberStatus.up(), Cluster.get(system).selfMember().status());
    }
}
