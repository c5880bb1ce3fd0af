package dev.fenceline.testkit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.typesafe.config.Config;
import com.typesafe.config.ConfigFactory;
import dev.fenceline.Fenceline;
import dev.fenceline.Worker;
import dev.fenceline.stat.StatCounter;
import dev.fenceline.stat.StatFile;
import dev.fenceline.stat.StatValue;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.TimeUnit;
import java.util.function.Predicate;
import org.apache.pekko.actor.typed.ActorSystem;
import org.apache.pekko.actor.typed.javadsl.Behaviors;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/** The counters file a runtime publishes for {@code fenceline stat}: its life, its bound, its clean-up. */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class StatPublishingTest {
    @TempDir
    Path dir;

    private Config config(String more) {
        return ConfigFactory.parseString("fenceline.transports = [sim]\nfenceline.stat.directory = \"" + dir
                + "\"\nfenceline.stat.interval = 10ms\n" + more);
    }

    /** Reads the one counters file in the directory until what it shows satisfies {@code until}. */
    private List<StatValue> awaitValues(Predicate<List<StatValue>> until) {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        List<StatValue> seen = List.of();
        while (true) {
            List<Path> files = StatFile.list(dir);
            if (files.size() == 1) {
                try (StatFile f = StatFile.open(files.get(0))) {
                    seen = f.read();
                }
                if (until.test(seen)) {
                    return seen;
                }
            }
            assertTrue(System.nanoTime() < deadline, "files " + files + ", last read " + seen);
            Thread.onSpinWait();
        }
    }

    private static Set<String> owners(List<StatValue> values, StatCounter.Scope scope) {
        Set<String> out = new TreeSet<>();
        values.stream().filter(v -> v.counter().scope() == scope).forEach(v -> out.add(v.owner()));
        return out;
    }

    @Test
    void aClosedWorkerLeavesTheFileAndAFullFileLeavesOutTheRest() throws Exception {
        // 64 slots hold six workers' ten counters, not a seventh's.
        try (Fenceline f = Fenceline.create(config("fenceline.stat.counters = 64"))) {
            Worker first = null;
            for (int i = 1; i <= 7; i++) {
                Worker w = f.newWorker("w" + i).toCompletableFuture().get(10, TimeUnit.SECONDS);
                first = first == null ? w : first;
            }
            // A snapshot may fall inside an update (a worker with some of its counters): wait for a whole one.
            List<StatValue> v = awaitValues(x -> owners(x, StatCounter.Scope.WORKER).size() == 6 && x.size() == 60);
            assertEquals(Set.of("w1", "w2", "w3", "w4", "w5", "w6"), owners(v, StatCounter.Scope.WORKER));
            assertTrue(v.stream().noneMatch(x -> x.owner().equals("w7")), "w7, there all along, left out: " + v);
            first.close().toCompletableFuture().get(10, TimeUnit.SECONDS);
            // w1's slots are free again: the seventh worker gets them at the next update.
            v = awaitValues(x -> owners(x, StatCounter.Scope.WORKER).equals(Set.of("w2", "w3", "w4", "w5", "w6", "w7"))
                    && x.size() == 60);
            assertEquals(10, v.stream().filter(x -> x.owner().equals("w7")).count(), v.toString());
        }
        try (var files = Files.list(dir)) {
            assertEquals(0, files.count(), "closed with the runtime");
        }
    }

    @Test
    void aFullFileKeepsUpdatingTheEndpointsInItAndAClosedOnesSlotsGoToOneLeftOut() throws Exception {
        // 64 slots (the fewest): two workers' ten counters and seven endpoints' six; the eighth is left out.
        try (Fenceline f = Fenceline.create(config("fenceline.stat.counters = 64"))) {
            Worker a = f.newWorker("a").toCompletableFuture().get(10, TimeUnit.SECONDS);
            Worker b = f.newWorker("b").toCompletableFuture().get(10, TimeUnit.SECONDS);
            // Both workers in the file first: else an update between the connects gives the endpoints
            // the slots of a worker not yet seen.
            awaitValues(x -> owners(x, StatCounter.Scope.WORKER).equals(Set.of("a", "b")));
            List<dev.fenceline.Endpoint> eps = new java.util.ArrayList<>();
            for (int i = 0; i < 8; i++) {
                eps.add(a.connect(b.address()).toCompletableFuture().get(10, TimeUnit.SECONDS));
            }
            List<StatValue> v = awaitValues(x -> owners(x, StatCounter.Scope.ENDPOINT).size() == 7);
            Set<String> in = owners(v, StatCounter.Scope.ENDPOINT);
            dev.fenceline.Endpoint inFile = eps.stream().filter(e -> in.contains(e.statistics().endpoint()))
                    .findFirst().orElseThrow();
            String out = eps.stream().map(e -> e.statistics().endpoint()).filter(n -> !in.contains(n))
                    .findFirst().orElseThrow();
            // While full, the endpoints in the file are still updated: an operation shows.
            dev.fenceline.MemoryRegion region = b.allocate(8);
            inFile.put(java.nio.ByteBuffer.allocateDirect(8), region.address(), region.remoteKey())
                    .toCompletableFuture().get(10, TimeUnit.SECONDS);
            String name = inFile.statistics().endpoint();
            awaitValues(x -> x.stream().anyMatch(c -> c.owner().equals(name) && c.counter() == StatCounter.ENDPOINT_OPERATIONS
                    && c.value() == 1));
            inFile.close().toCompletableFuture().get(10, TimeUnit.SECONDS);
            v = awaitValues(x -> owners(x, StatCounter.Scope.ENDPOINT).contains(out));
            assertTrue(!owners(v, StatCounter.Scope.ENDPOINT).contains(name), "the closed one's slots were freed: " + v);
        }
    }

    @Test
    void aFileLeftByAProcessThatIsGoneIsRemovedByTheNextRuntime() throws Exception {
        Files.createDirectories(dir);
        Path stale = dir.resolve(Long.MAX_VALUE + "-1.stat");
        Path unrelated = dir.resolve("notes.txt");
        Files.write(stale, new byte[128]);
        Files.write(unrelated, new byte[1]);
        try (Fenceline f = Fenceline.create(config(""))) {
            assertEquals(List.of("sim"), f.transports());
            assertTrue(!Files.exists(stale), "stale file removed");
            assertTrue(Files.exists(unrelated), "what is not a counters file stays");
            assertEquals(1, StatFile.list(dir).size());
        }
    }

    @Test
    void onTheUsersActorSystemTheFileGoesWhenTheSystemEnds() throws Exception {
        ActorSystem<Void> system = ActorSystem.create(Behaviors.empty(), "stat-user",
                config("").withFallback(ConfigFactory.load()));
        try {
            Fenceline f = Fenceline.get(system);
            f.newWorker("mine").toCompletableFuture().get(10, TimeUnit.SECONDS);
            awaitValues(x -> owners(x, StatCounter.Scope.WORKER).equals(Set.of("mine")));
        } finally {
            system.terminate();
            system.getWhenTerminated().toCompletableFuture().get(30, TimeUnit.SECONDS);
        }
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        while (!StatFile.list(dir).isEmpty()) { // removed on the publisher's own thread, after termination
            assertTrue(System.nanoTime() < deadline, "still there: " + StatFile.list(dir));
            Thread.onSpinWait();
        }
    }

    @Test
    void publishingCanBeTurnedOff() throws Exception {
        try (Fenceline f = Fenceline.create(config("fenceline.stat.enabled = off"))) {
            f.newWorker("quiet").toCompletableFuture().get(10, TimeUnit.SECONDS);
            assertTrue(!Files.exists(dir.resolve(ProcessHandle.current().pid() + "-1.stat")));
            try (var files = Files.list(dir)) {
                assertEquals(0, files.count());
            }
        }
    }
}
