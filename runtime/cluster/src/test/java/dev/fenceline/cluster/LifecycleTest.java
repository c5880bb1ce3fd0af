package dev.fenceline.cluster;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.typesafe.config.Config;
import com.typesafe.config.ConfigFactory;
import dev.fenceline.Endpoint;
import dev.fenceline.Fenceline;
import dev.fenceline.MemoryRegion;
import dev.fenceline.RemoteKey;
import dev.fenceline.Worker;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.TimeUnit;
import java.util.regex.Pattern;
import org.apache.pekko.actor.typed.ActorSystem;
import org.apache.pekko.actor.typed.javadsl.Behaviors;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * A service's actor system that ends without anyone closing Fenceline: coordinated shutdown flushes
 * the endpoints and closes the workers, and the worker actors close their transports when they
 * stop, so nothing is lost and nothing stays behind (no segment in /dev/shm, no listening socket).
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class LifecycleTest {
    private static final String SECRET = "fenceline.transport.tcp.secret = \"lifecycle-test-shared-secret\"\n"
            + "fenceline.jmx.enabled = off\nfenceline.stat.enabled = off\n";

    private static ActorSystem<Void> system(String name, String hocon) {
        Config c = ConfigFactory.parseString(SECRET + hocon).withFallback(ConfigFactory.load());
        return ActorSystem.create(Behaviors.empty(), name, c);
    }

    private static <T> T await(CompletionStage<T> s) throws Exception {
        return s.toCompletableFuture().get(30, TimeUnit.SECONDS);
    }

    /** @return this process's files in /dev/shm (their names start with fl-, the namespace and our pid) */
    private static List<String> ourSegments() throws IOException {
        Pattern ours = Pattern.compile("fl-[0-9]+-" + ProcessHandle.current().pid() + "-.*");
        List<String> found = new ArrayList<>();
        try (DirectoryStream<Path> files = Files.newDirectoryStream(Path.of("/dev/shm"), "fl-*")) {
            for (Path f : files) {
                if (ours.matcher(f.getFileName().toString()).matches()) {
                    found.add(f.getFileName().toString());
                }
            }
        }
        return found;
    }

    /** @return how many listening TCP sockets this process holds (from /proc: socket inodes of our fds) */
    private static int ourListeningSockets() throws IOException {
        Set<String> listening = new HashSet<>();
        for (String table : List.of("/proc/net/tcp", "/proc/net/tcp6")) {
            Path p = Path.of(table);
            if (!Files.exists(p)) {
                continue;
            }
            for (String line : Files.readAllLines(p)) {
                String[] f = line.trim().split("\\s+");
                if (f.length > 9 && f[3].equals("0A")) { // state LISTEN
                    listening.add(f[9]);
                }
            }
        }
        int n = 0;
        try (DirectoryStream<Path> fds = Files.newDirectoryStream(Path.of("/proc/self/fd"))) {
            for (Path fd : fds) {
                try {
                    String target = Files.readSymbolicLink(fd).toString();
                    if (target.startsWith("socket:[") && listening.contains(target.substring(8, target.length() - 1))) {
                        n++;
                    }
                } catch (IOException gone) {
                    // closed while we looked
                }
            }
        }
        return n;
    }

    /**
     * With coordinated shutdown the workers are closed in service-stop; without it (off), the
     * worker actors stop with the system and close their transports then.
     */
    @org.junit.jupiter.params.ParameterizedTest(name = "coordinated-shutdown = {0}")
    @org.junit.jupiter.params.provider.ValueSource(strings = {"on", "off"})
    void aSystemThatTerminatesWithoutCloseLeavesNoSegmentAndNoListeningSocket(String cs) throws Exception {
        int socketsBefore = ourListeningSockets();
        List<String> segmentsBefore = ourSegments();
        // A cluster member that joined itself: its coordinated shutdown also leaves the cluster.
        Config member = ConfigFactory.parseString("fenceline.transports = [shm, tcp]\n"
                + "fenceline.coordinated-shutdown = " + cs).withFallback(ClusterMember.config(null, 0));
        ActorSystem<Void> system = ActorSystem.create(Behaviors.empty(), "lifecycle", member);
        org.apache.pekko.cluster.typed.Cluster cluster = org.apache.pekko.cluster.typed.Cluster.get(system);
        cluster.manager().tell(org.apache.pekko.cluster.typed.Join.create(cluster.selfMember().address()));
        Fenceline f = Fenceline.get(system);
        Worker a = await(f.newWorker("a"));
        Worker b = await(f.newWorker("b"));
        MemoryRegion region = b.allocate(1 << 16);
        Endpoint ep = await(a.connect(b.address()));
        RemoteKey key = a.unpackRemoteKey(region.remoteKey().toBytes());
        await(ep.put(ByteBuffer.allocateDirect(8).putLong(0, 5), region.address(), key));
        assertTrue(ourSegments().size() > segmentsBefore.size(), "the shm transport made segments: " + ourSegments());
        assertTrue(ourListeningSockets() > socketsBefore + 1, "the tcp transport listens, and Artery");

        system.terminate(); // no close() of any worker, endpoint or runtime
        await(system.getWhenTerminated());
        await(a.whenClosed());
        await(b.whenClosed());
        assertEquals(segmentsBefore, ourSegments(), "no segment left in /dev/shm");
        assertEquals(socketsBefore, ourListeningSockets(), "no listening socket left");
        assertTrue(f.workers().isEmpty(), "the runtime lists no worker");
    }

    @Test
    void coordinatedShutdownFlushesWhatWasIssuedBeforeTheServiceStopped() throws Exception {
        ActorSystem<Void> target = system("target", "fenceline.transports = [tcp]");
        try {
            Worker t = await(Fenceline.get(target).newWorker("t"));
            int words = 4096;
            ByteBuffer memory = ByteBuffer.allocateDirect(8 * words).order(ByteOrder.nativeOrder());
            MemoryRegion region = t.register(memory);
            ActorSystem<Void> origin = system("origin", "fenceline.transports = [tcp]");
            Worker o = await(Fenceline.get(origin).newWorker("o"));
            Endpoint ep = await(o.connect(t.address()));
            RemoteKey key = o.unpackRemoteKey(region.remoteKey().toBytes());
            ByteBuffer[] values = new ByteBuffer[words];
            for (int i = 0; i < words; i++) {
                values[i] = ByteBuffer.allocateDirect(8).order(ByteOrder.nativeOrder()).putLong(0, i + 1);
                ep.putImplicit(values[i], region.address() + 8L * i, key); // completed by a flush, if any
            }
            origin.terminate(); // at once, without a flush or a close
            await(origin.getWhenTerminated());
            for (int i = 0; i < words; i++) {
                assertEquals(i + 1, memory.getLong(8 * i), "word " + i + " was flushed at service-requests-done");
            }
        } finally {
            target.terminate();
            await(target.getWhenTerminated());
        }
    }

    /**
     * A member the cluster downed does not flush: its coordinated shutdown (for the downing reason)
     * aborts its endpoints, so a request the target is still working on ends at once, naming the
     * downing, rather than being waited for at service-requests-done.
     */
    @Test
    void aDownedMembersShutdownAbortsItsEndpointsInsteadOfFlushing() throws Exception {
        ActorSystem<Void> target = system("target", "fenceline.transports = [tcp]");
        java.util.concurrent.CountDownLatch entered = new java.util.concurrent.CountDownLatch(1);
        java.util.concurrent.CountDownLatch release = new java.util.concurrent.CountDownLatch(1);
        try {
            Worker t = await(Fenceline.get(target).newWorker("t"));
            t.setActiveMessageHandler(1, (h, p) -> {
                entered.countDown();
                try {
                    release.await(30, TimeUnit.SECONDS);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
            });
            ActorSystem<Void> origin = system("origin", "fenceline.transports = [tcp]");
            Worker o = await(Fenceline.get(origin).newWorker("o"));
            Endpoint ep = await(o.connect(t.address()));
            java.util.concurrent.CompletableFuture<Void> held = ep.sendActiveMessage(1, null, null)
                    .toCompletableFuture();
            assertTrue(entered.await(10, TimeUnit.SECONDS), "the target runs the handler");
            org.apache.pekko.actor.CoordinatedShutdown.get(origin)
                    .run(org.apache.pekko.actor.CoordinatedShutdown.clusterDowningReason());
            java.util.concurrent.ExecutionException e = org.junit.jupiter.api.Assertions.assertThrows(
                    java.util.concurrent.ExecutionException.class, () -> held.get(3, TimeUnit.SECONDS));
            org.junit.jupiter.api.Assertions.assertInstanceOf(dev.fenceline.OutcomeUnknownException.class,
                    e.getCause(), String.valueOf(e.getCause()));
            assertTrue(String.valueOf(e.getCause().getMessage()).contains("downed"), e.getCause().getMessage());
            await(origin.getWhenTerminated());
        } finally {
            release.countDown();
            target.terminate();
            await(target.getWhenTerminated());
        }
    }

    @Test
    void theRuntimesActorsRunOnTheConfiguredDispatcher() throws Exception {
        ActorSystem<Void> system = system("dispatched", "fenceline.transports = [tcp]\n"
                + "fenceline.dispatcher = lifecycle-test-dispatcher\n"
                + "lifecycle-test-dispatcher { type = Dispatcher, executor = thread-pool-executor,"
                + " thread-pool-executor.fixed-pool-size = 1 }");
        try {
            Worker a = await(Fenceline.get(system).newWorker("a"));
            Worker b = await(Fenceline.get(system).newWorker("b"));
            MemoryRegion region = b.allocate(64);
            Endpoint ep = await(a.connect(b.address()));
            await(ep.put(ByteBuffer.allocateDirect(8), region.address(), a.unpackRemoteKey(region.remoteKey().toBytes())));
            assertTrue(Thread.getAllStackTraces().keySet().stream()
                    .anyMatch(th -> th.getName().contains("lifecycle-test-dispatcher")),
                    "a thread of the configured dispatcher ran the worker and endpoint actors");
        } finally {
            system.terminate();
            await(system.getWhenTerminated());
        }
    }

    @Test
    void aDispatcherThatIsNotConfiguredIsRefusedByName() {
        dev.fenceline.ConfigurationException e = org.junit.jupiter.api.Assertions.assertThrows(
                dev.fenceline.ConfigurationException.class, () -> Fenceline.create(ConfigFactory.parseString(SECRET
                        + "fenceline.transports = [tcp]\nfenceline.dispatcher = no-such-dispatcher")));
        assertTrue(e.getMessage().contains("fenceline.dispatcher") && e.getMessage().contains("no-such-dispatcher"),
                e.getMessage());
    }
}
