package dev.fenceline.actor;

import com.typesafe.config.ConfigFactory;
import dev.fenceline.LaneType;
import dev.fenceline.RemoteKey;
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
import java.util.concurrent.atomic.AtomicLong;
import org.apache.pekko.actor.testkit.typed.javadsl.BehaviorTestKit;
import java.util.concurrent.TimeUnit;

/**
 * What the endpoint actor's tier-2 tests share: an endpoint to a recording peer, its facade, and
 * an actor spawned with {@link BehaviorTestKit} over recording lanes.
 */
abstract class EndpointActorFixture {
    final UUID peerId = UUID.randomUUID();
    final WorkerAddress peer = new WorkerAddress(peerId, "peer", Map.of("recording", new byte[0]));
    final RemoteKey key = new RemoteKey(peerId, 42, 0x10000, 1 << 24, java.util.Map.of());
    final AtomicLong workerEpoch = new AtomicLong();
    final EndpointChannel channel = new EndpointChannel("test", peer);
    final EndpointImpl facade = new EndpointImpl(channel, workerEpoch, null, Duration.ofSeconds(1));

    BehaviorTestKit<EndpointProtocol.Command> spawn(String mode, LaneConnection... lanes) {
        return spawn(mode, "failover", lanes);
    }

    BehaviorTestKit<EndpointProtocol.Command> spawn(String mode, String errorMode, LaneConnection... lanes) {
        FencelineSettings s = FencelineSettings.fromConfig(ConfigFactory.parseString("fenceline.fence.mode = " + mode
                + "\nfenceline.endpoint.error-mode = " + errorMode).withFallback(ConfigFactory.defaultReference())
                .resolve());
        return BehaviorTestKit.create(EndpointActor.createConnected(s, channel, facade, List.of(lanes)));
    }

    /** Runs every message the actor sent itself (drains, fence completions) until none is left. */
    static void settle(BehaviorTestKit<EndpointProtocol.Command> kit) {
        while (kit.selfInbox().hasMessages()) {
            kit.runOne();
        }
    }

    static RecordingLane shortLane() {
        return new RecordingLane(1, Set.of(LaneType.AM, LaneType.RMA, LaneType.AMO));
    }

    static RecordingLane bulkLane() {
        return new RecordingLane(2, Set.of(LaneType.RMA_BW));
    }

    static Throwable failure(CompletableFuture<?> f) {
        return org.junit.jupiter.api.Assertions.assertThrows(java.util.concurrent.ExecutionException.class,
                () -> f.get(1, TimeUnit.SECONDS)).getCause();
    }
}
