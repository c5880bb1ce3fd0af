package dev.fenceline.testkit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.typesafe.config.ConfigFactory;
import dev.fenceline.AtomicOp;
import dev.fenceline.Endpoint;
import dev.fenceline.EndpointStatistics;
import dev.fenceline.Fenceline;
import dev.fenceline.LaneEvent;
import dev.fenceline.LaneStatistics;
import dev.fenceline.MemoryRegion;
import dev.fenceline.Worker;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import jdk.jfr.Recording;
import jdk.jfr.consumer.RecordedEvent;
import jdk.jfr.consumer.RecordingFile;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * What a service sees of a running endpoint: per-lane statistics and latency percentiles, lane
 * events through a listener, and the same as JFR events, through a failover and a recovery.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class ObservabilityTest {
    private static final String LANES = "fenceline.transports = [sim]\n"
            + "fenceline.transport.sim.lanes = ["
            + "{ types = [AM, RMA, AMO], min-delay = 0us, max-delay = 30us },"
            + "{ types = [AM, RMA, RMA_BW, AMO], min-delay = 0us, max-delay = 30us } ]";

    private static void awaitEvents(List<LaneEvent> heard, int n) {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        while (heard.size() < n) {
            assertTrue(System.nanoTime() < deadline, "lane events heard: " + heard);
            Thread.onSpinWait();
        }
    }

    @Test
    void statisticsEventsAndJfrTellTheSameStory() throws Exception {
        Path file = Files.createTempFile("fenceline", ".jfr");
        List<LaneEvent> heard = new CopyOnWriteArrayList<>();
        try (Recording recording = new Recording()) {
            for (String e : new String[] {"LaneFailover", "LaneChange", "StrongFence", "Replay", "Connect"}) {
                recording.enable("dev.fenceline." + e);
            }
            recording.start();
            try (Fenceline f = Fenceline.create(ConfigFactory.parseString(LANES))) {
                Worker a = f.newWorker("a").toCompletableFuture().get(10, TimeUnit.SECONDS);
                Worker b = f.newWorker("b").toCompletableFuture().get(10, TimeUnit.SECONDS);
                AutoCloseable subscription = a.addLaneEventListener(heard::add);
                MemoryRegion region = b.allocate(1 << 20);
                Endpoint ep = a.connect(b.address()).toCompletableFuture().get(10, TimeUnit.SECONDS);
                SimNetwork net = SimNetwork.of(f);
                for (int i = 0; i < 50; i++) {
                    ep.put(ByteBuffer.allocate(64), region.address(), region.remoteKey());
                    ep.put(ByteBuffer.allocate(1 << 16), region.address() + 4096, region.remoteKey()); // the bulk lane
                    ep.fence(); // two lanes carry work: a strong fence
                    ep.atomicPost64(AtomicOp.ADD, region.address() + 8, region.remoteKey(), 1);
                    if (i == 20) {
                        net.failLane(ep, 1);
                    }
                    if (i == 20) {
                        awaitEvents(heard, 1); // applied (the fast path may run meanwhile: one lane is left)
                    }
                    if (i == 30) {
                        net.recoverLane(ep, 1);
                        awaitEvents(heard, 2);
                    }
                    ep.flush().toCompletableFuture().get(10, TimeUnit.SECONDS);
                }
                EndpointStatistics s = ep.statistics();
                assertEquals(150, s.operations(), s.toString());
                assertEquals(150, s.completed(), s.toString());
                assertEquals(0, s.outstanding(), s.toString());
                assertEquals(50, s.flushes(), s.toString());
                assertTrue(s.strongFences() > 0, s.toString());
                assertTrue(s.flushLatency().count() > 0 && s.flushLatency().p50() > 0, s.toString());
                assertTrue(s.flushLatency().p99() >= s.flushLatency().p50() && s.flushLatency().max() >= s.flushLatency()
                        .p99(), s.flushLatency().toString());
                assertEquals(s.strongFences(), s.strongFenceLatency().count(), s.toString());
                assertEquals(2, s.lanes().size());
                LaneStatistics bulk = s.lanes().get(1);
                assertEquals(1, bulk.failovers(), bulk.toString());
                assertTrue(bulk.live(), bulk.toString());
                // The bulk lane carried every 64 KiB put while it lived: 21 before the failure, 19 after.
                assertTrue(bulk.bytes() >= 40L * (1 << 16), "64 KiB puts over lane 1: " + bulk);
                // Every request was posted on a lane (once, and again per restart) or done on the fast path
                // (which may open while one lane is left).
                long posted = s.lanes().stream().mapToLong(LaneStatistics::operations).sum();
                assertEquals(s.operations() + s.restarts(), posted + s.fastPath(), s.toString());
                assertTrue(s.fastPathShare() >= 0 && s.fastPathShare() < 1, s.toString());
                assertTrue(s.lanes().get(0).bytes() > 0 && s.lanes().get(0).operations() > 0, s.toString());
                assertEquals(s.lanes().stream().mapToLong(LaneStatistics::fragments).sum(),
                        s.lanes().stream().mapToLong(LaneStatistics::operations).sum(),
                        "one fragment per operation here (64 KiB fits in one): " + s);
                subscription.close();
                // Closed before the runtime: a worker that closes fails the lanes others hold to it.
                ep.close().toCompletableFuture().get(10, TimeUnit.SECONDS);
            }
            recording.stop();
            recording.dump(file);
        }
        // The listener heard the failover, then the recovery, in that order.
        assertEquals(2, heard.size(), heard.toString());
        LaneEvent.LaneFailedOver failed = (LaneEvent.LaneFailedOver) heard.get(0);
        assertEquals(1, failed.lane());
        assertTrue(failed.cause().contains("failed by SimNetwork"), failed.cause());
        assertEquals(new LaneEvent.LaneRecovered(failed.endpoint(), failed.peer(), 1, "sim"), heard.get(1));

        Map<String, Integer> counts = new TreeMap<>();
        long fenceTime = 0;
        for (RecordedEvent e : RecordingFile.readAllEvents(file)) {
            counts.merge(e.getEventType().getName(), 1, Integer::sum);
            if (e.getEventType().getName().equals("dev.fenceline.StrongFence")) {
                fenceTime += e.getLong("took");
            }
        }
        Files.deleteIfExists(file);
        assertEquals(1, counts.get("dev.fenceline.LaneFailover"), counts.toString());
        assertEquals(1, counts.get("dev.fenceline.LaneChange"), counts.toString());
        assertTrue(counts.getOrDefault("dev.fenceline.Replay", 0) >= 2, counts.toString());
        assertEquals(1, counts.get("dev.fenceline.Connect"), counts.toString());
        assertTrue(counts.getOrDefault("dev.fenceline.StrongFence", 0) > 0 && fenceTime > 0, counts.toString());
    }

    @Test
    void anEndpointThatLosesItsLastLaneSaysSo() throws Exception {
        Path file = Files.createTempFile("fenceline", ".jfr");
        List<LaneEvent> heard = new CopyOnWriteArrayList<>();
        try (Recording recording = new Recording()) {
            recording.enable("dev.fenceline.EndpointFailure");
            recording.start();
            try (Fenceline f = Fenceline.create(ConfigFactory.parseString("fenceline.transports = [sim]\n"
                    + "fenceline.transport.sim.lanes = [{ types = [AM, RMA, RMA_BW, AMO], min-delay = 0us, max-delay = 20us }]"))) {
                Worker a = f.newWorker("a").toCompletableFuture().get(10, TimeUnit.SECONDS);
                Worker b = f.newWorker("b").toCompletableFuture().get(10, TimeUnit.SECONDS);
                a.addLaneEventListener(heard::add);
                a.addLaneEventListener(e -> {
                    throw new IllegalStateException("a listener that throws is logged, and the others still hear");
                });
                Endpoint ep = a.connect(b.address()).toCompletableFuture().get(10, TimeUnit.SECONDS);
                SimNetwork.of(f).failLane(ep, 0);
                awaitEvents(heard, 1);
            }
            recording.stop();
            recording.dump(file);
        }
        LaneEvent.EndpointFailed failed = (LaneEvent.EndpointFailed) heard.get(0);
        assertTrue(failed.cause().contains("its last live lane"), failed.cause());
        List<RecordedEvent> events = RecordingFile.readAllEvents(file).stream()
                .filter(e -> e.getEventType().getName().equals("dev.fenceline.EndpointFailure")).toList();
        Files.deleteIfExists(file);
        assertEquals(1, events.size(), events.toString());
        assertEquals(failed.endpoint(), events.get(0).getString("endpoint"));
    }

    @Test
    void aHandlerOverItsTimeBoundIsAnEventEachTime() throws Exception {
        Path file = Files.createTempFile("fenceline", ".jfr");
        try (Recording recording = new Recording()) {
            recording.enable("dev.fenceline.SlowHandler");
            recording.start();
            try (Fenceline f = Fenceline.create(ConfigFactory.parseString("fenceline.transports = [sim]\n"
                    + "fenceline.active-message.handler-time-bound = 5ms"))) {
                Worker a = f.newWorker("a").toCompletableFuture().get(10, TimeUnit.SECONDS);
                Worker b = f.newWorker("b").toCompletableFuture().get(10, TimeUnit.SECONDS);
                // The slow handler is the subject here: it really holds its thread for 200 ms, far over
                // the bound, so that the watchdog's looks (every 2.5 ms) find it over its bound.
                b.setActiveMessageHandler(3, (h, p) -> {
                    long end = System.nanoTime() + 200_000_000L; // a park may return early: to a deadline
                    for (long left; (left = end - System.nanoTime()) > 0; ) {
                        java.util.concurrent.locks.LockSupport.parkNanos(left);
                    }
                });
                b.setActiveMessageHandler(4, (h, p) -> { });
                Endpoint ep = a.connect(b.address()).toCompletableFuture().get(10, TimeUnit.SECONDS);
                for (int i = 0; i < 3; i++) {
                    ep.sendActiveMessage(4, ByteBuffer.allocate(8), ByteBuffer.allocate(0));
                }
                for (int i = 0; i < 2; i++) {
                    ep.sendActiveMessage(3, ByteBuffer.allocate(8), ByteBuffer.allocate(0));
                }
                ep.flush().toCompletableFuture().get(10, TimeUnit.SECONDS);
            }
            recording.stop();
            recording.dump(file);
        }
        List<RecordedEvent> events = RecordingFile.readAllEvents(file).stream()
                .filter(e -> e.getEventType().getName().equals("dev.fenceline.SlowHandler")).toList();
        Files.deleteIfExists(file);
        assertEquals(2, events.size(), "the two slow calls, not the fast ones: " + events);
        for (RecordedEvent e : events) {
            assertEquals(3, e.getInt("id"));
            assertEquals("b", e.getString("worker"));
            assertEquals(5_000_000L, e.getLong("bound"));
            assertTrue(e.getLong("took") >= 200_000_000L, e.toString());
            long resolution = e.getLong("resolution");
            assertTrue(resolution > 0 && e.getLong("took") - resolution > 5_000_000L,
                    "dated between two looks, over its bound since the one that found it: " + e);
        }
    }

    @Test
    void aWorkerIsAJmxBeanWhileItLives() throws Exception {
        javax.management.MBeanServer server = java.lang.management.ManagementFactory.getPlatformMBeanServer();
        javax.management.ObjectName name = new javax.management.ObjectName(
                "dev.fenceline:type=Worker,name=" + javax.management.ObjectName.quote("jmx-a"));
        try (Fenceline f = Fenceline.create(ConfigFactory.parseString("fenceline.transports = [sim]"))) {
            Worker a = f.newWorker("jmx-a").toCompletableFuture().get(10, TimeUnit.SECONDS);
            Worker b = f.newWorker("jmx-b").toCompletableFuture().get(10, TimeUnit.SECONDS);
            MemoryRegion region = b.allocate(64);
            Endpoint ep = a.connect(b.address()).toCompletableFuture().get(10, TimeUnit.SECONDS);
            for (int i = 0; i < 7; i++) {
                ep.put(ByteBuffer.allocate(8), region.address(), region.remoteKey());
            }
            ep.flush().toCompletableFuture().get(10, TimeUnit.SECONDS);
            assertEquals(7L, server.getAttribute(name, "Operations"));
            assertEquals(1L, server.getAttribute(name, "OpenEndpoints"));
            String[] summaries = (String[]) server.getAttribute(name, "EndpointSummaries");
            assertEquals(1, summaries.length);
            assertTrue(summaries[0].startsWith("jmx-a->jmx-b#1 -> jmx-b [0:sim 1:sim] ops 7 ok 7"), summaries[0]);
            a.close().toCompletableFuture().get(10, TimeUnit.SECONDS);
            assertTrue(!server.isRegistered(name), "unregistered with its worker");
        }
    }
}
