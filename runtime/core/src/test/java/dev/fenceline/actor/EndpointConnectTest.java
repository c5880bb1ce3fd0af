package dev.fenceline.actor;

import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.typesafe.config.ConfigFactory;
import dev.fenceline.EndpointFailedException;
import dev.fenceline.LaneType;
import dev.fenceline.WorkerAddress;
import dev.fenceline.internal.FencelineSettings;
import dev.fenceline.spi.LaneConnection;
import dev.fenceline.spi.RecordingLane;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.apache.pekko.actor.testkit.typed.javadsl.ActorTestKit;
import org.apache.pekko.actor.testkit.typed.javadsl.TestProbe;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** Tier 3 for connecting: a transport that answers after the connect timeout does not leak its lanes. */
@Timeout(value = 30, unit = TimeUnit.SECONDS)
class EndpointConnectTest {
    private static final ActorTestKit KIT = ActorTestKit.create();

    @AfterAll
    static void stop() {
        KIT.shutdownTestKit();
    }

    @Test
    void lanesThatArriveAfterTheTimeoutAreClosed() throws Exception {
        FencelineSettings s = FencelineSettings.fromConfig(ConfigFactory.parseString(
                "fenceline.endpoint.connect-timeout = 50ms").withFallback(ConfigFactory.defaultReference()).resolve());
        WorkerAddress peer = new WorkerAddress(UUID.randomUUID(), "slow", Map.of("recording", new byte[0]));
        EndpointChannel channel = new EndpointChannel("slow-connect", peer);
        EndpointImpl facade = new EndpointImpl(channel, new AtomicLong(), KIT.system(), Duration.ofSeconds(1));
        CompletableFuture<List<LaneConnection>> transport = new CompletableFuture<>();
        TestProbe<EndpointProtocol.ConnectResult> probe = KIT.createTestProbe();
        KIT.spawn(EndpointActor.create(s, channel, facade))
                .tell(new EndpointProtocol.Connect(() -> transport, probe.getRef()));
        EndpointProtocol.ConnectResult r = probe.receiveMessage(Duration.ofSeconds(10));
        assertNotNull(r.error(), "the connect timed out");
        assertInstanceOf(EndpointFailedException.class, r.error());
        RecordingLane late = new RecordingLane(9, Set.of(LaneType.AM));
        transport.complete(List.of(late));
        assertTrue(late.events.contains("close"), "the late lane was closed, not leaked");
    }

    /** An ended endpoint's actor stops after its linger: a worker does not keep every endpoint it had. */
    @Test
    void aClosedEndpointStopsAfterItsLingerAndClosesWhatArrivesMeanwhile() {
        FencelineSettings s = connectTimeout("300ms");
        EndpointChannel channel = channel("linger");
        EndpointImpl facade = new EndpointImpl(channel, new AtomicLong(), KIT.system(), Duration.ofSeconds(1));
        RecordingLane lane = new RecordingLane(11, Set.of(LaneType.AM, LaneType.RMA));
        TestProbe<EndpointProtocol.ConnectResult> connected = KIT.createTestProbe();
        var ref = KIT.spawn(EndpointActor.create(s, channel, facade));
        ref.tell(new EndpointProtocol.Connect(() -> CompletableFuture.completedFuture(List.of(lane)),
                connected.getRef()));
        assertNotNull(connected.receiveMessage(Duration.ofSeconds(10)).endpoint(), "connected");
        TestProbe<org.apache.pekko.Done> closed = KIT.createTestProbe();
        ref.tell(new EndpointProtocol.Close(closed.getRef()));
        closed.receiveMessage(Duration.ofSeconds(10));
        RecordingLane late = new RecordingLane(12, Set.of(LaneType.AM));
        ref.tell(new LaneProtocol.LaneAdded(late));
        TestProbe<Object> watcher = KIT.createTestProbe();
        watcher.expectTerminated(ref, Duration.ofSeconds(10));
        assertTrue(lane.events.contains("close"), "its lane was closed at close: " + lane.events);
        assertTrue(late.events.contains("close"), "a lane handed over after the end was closed: " + late.events);
        assertTrue(channel.terminal() != null, "the facade knows it ended, without the actor");
    }

    @Test
    void lanesOfAConnectThatCompletesAfterACloseAreClosed() {
        FencelineSettings s = connectTimeout("5s");
        EndpointChannel channel = channel("closed-while-connecting");
        EndpointImpl facade = new EndpointImpl(channel, new AtomicLong(), KIT.system(), Duration.ofSeconds(1));
        CompletableFuture<List<LaneConnection>> transport = new CompletableFuture<>();
        TestProbe<EndpointProtocol.ConnectResult> connected = KIT.createTestProbe();
        var ref = KIT.spawn(EndpointActor.create(s, channel, facade));
        ref.tell(new EndpointProtocol.Connect(() -> transport, connected.getRef()));
        TestProbe<org.apache.pekko.Done> closed = KIT.createTestProbe();
        ref.tell(new EndpointProtocol.Close(closed.getRef()));
        closed.receiveMessage(Duration.ofSeconds(10));
        RecordingLane lane = new RecordingLane(13, Set.of(LaneType.AM));
        transport.complete(List.of(lane));
        TestProbe<Object> sync = KIT.createTestProbe();
        // The actor handles messages in order: once it answers a later Close, it has taken the lanes.
        ref.tell(new EndpointProtocol.Close(closed.getRef()));
        closed.receiveMessage(Duration.ofSeconds(10));
        sync.awaitAssert(() -> {
            assertTrue(lane.events.contains("close"), "a lane of a connect that completed after the close was closed: "
                    + lane.events);
            return null;
        });
    }

    private static FencelineSettings connectTimeout(String duration) {
        return FencelineSettings.fromConfig(ConfigFactory.parseString("fenceline.endpoint.connect-timeout = " + duration)
                .withFallback(ConfigFactory.defaultReference()).resolve());
    }

    private static EndpointChannel channel(String name) {
        return new EndpointChannel(name, new WorkerAddress(UUID.randomUUID(), "peer", Map.of("recording", new byte[0])));
    }
}
