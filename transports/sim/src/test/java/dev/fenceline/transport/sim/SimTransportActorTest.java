package dev.fenceline.transport.sim;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.typesafe.config.ConfigFactory;
import dev.fenceline.EndpointFailedException;
import dev.fenceline.spi.LaneConnection;
import java.time.Duration;
import java.util.List;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import org.apache.pekko.actor.testkit.typed.javadsl.ActorTestKit;
import org.apache.pekko.actor.testkit.typed.javadsl.ManualTime;
import org.apache.pekko.actor.testkit.typed.javadsl.TestProbe;
import org.apache.pekko.actor.typed.ActorRef;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * The sim transport actor on manual time: a connect across a partition waits for the heal, and
 * fails at the connect-timeout if none comes. The backend is a recorder whose peers and partitions
 * the test decides.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class SimTransportActorTest {
    private static final ActorTestKit KIT = ActorTestKit.create(ManualTime.config()
            .withFallback(ConfigFactory.parseString("pekko.log-dead-letters = off")));
    private static final ManualTime TIME = ManualTime.get(KIT.system());
    private static final Duration TIMEOUT = Duration.ofSeconds(2);
    private static final Duration WAIT = Duration.ofSeconds(5);

    private final Set<UUID> open = ConcurrentHashMap.newKeySet();
    private final Set<UUID> cut = ConcurrentHashMap.newKeySet();
    private TestProbe<UUID> handedOut;
    private final UUID peer = UUID.randomUUID();

    private final SimTransportActor.Backend backend = new SimTransportActor.Backend() {
        @Override
        public String workerName() {
            return "sim-actor-test";
        }

        @Override
        public boolean exists(UUID p) {
            return open.contains(p);
        }

        @Override
        public boolean partitioned(UUID p) {
            return cut.contains(p);
        }

        @Override
        public List<LaneConnection> lanes(UUID p) {
            handedOut.getRef().tell(p);
            return List.of();
        }
    };

    @BeforeEach
    void setUp() {
        handedOut = KIT.createTestProbe();
        open.add(peer);
    }

    @AfterAll
    static void shutdown() {
        KIT.shutdownTestKit();
    }

    private ActorRef<SimTransportActor.Command> spawn() {
        return KIT.spawn(SimTransportActor.create(backend, TIMEOUT));
    }

    private static CompletableFuture<List<LaneConnection>> connect(ActorRef<SimTransportActor.Command> a, UUID to) {
        CompletableFuture<List<LaneConnection>> f = new CompletableFuture<>();
        a.tell(new SimTransportActor.Connect(to, f));
        return f;
    }

    /** Returns once the actor handled everything told before (it answers in order). */
    private void processed(ActorRef<SimTransportActor.Command> a) {
        UUID other = UUID.randomUUID();
        open.add(other);
        connect(a, other);
        assertEquals(other, handedOut.receiveMessage(WAIT));
    }

    private static Throwable failure(CompletableFuture<?> f) {
        return assertThrows(ExecutionException.class, () -> f.get(WAIT.toSeconds(), TimeUnit.SECONDS)).getCause();
    }

    @Test
    void aReachablePeerIsConnectedAtOnceAndAnUnknownOneRefused() throws Exception {
        ActorRef<SimTransportActor.Command> a = spawn();
        assertEquals(List.of(), connect(a, peer).get(WAIT.toSeconds(), TimeUnit.SECONDS));
        assertEquals(peer, handedOut.receiveMessage(WAIT));
        UUID nobody = UUID.randomUUID();
        Throwable cause = failure(connect(a, nobody));
        assertInstanceOf(EndpointFailedException.class, cause);
        assertTrue(cause.getMessage().contains("no open worker " + nobody), cause.getMessage());
        handedOut.expectNoMessage(Duration.ofMillis(50));
        KIT.stop(a);
    }

    @Test
    void aConnectAcrossAPartitionWaitsForTheHeal() throws Exception {
        ActorRef<SimTransportActor.Command> a = spawn();
        cut.add(peer);
        CompletableFuture<List<LaneConnection>> f = connect(a, peer);
        processed(a);
        TIME.timePasses(TIMEOUT.minusMillis(1));
        a.tell(new SimTransportActor.Healed(UUID.randomUUID())); // another peer's heal: it waits on
        cut.remove(peer);
        a.tell(new SimTransportActor.Healed(peer));
        assertEquals(peer, handedOut.receiveMessage(WAIT));
        assertEquals(List.of(), f.get(WAIT.toSeconds(), TimeUnit.SECONDS));
        TIME.timePasses(TIMEOUT); // its timer was cancelled
        handedOut.expectNoMessage(Duration.ofMillis(50));
        KIT.stop(a);
    }

    @Test
    void aConnectAcrossAPartitionThatDoesNotHealFailsAtTheTimeout() {
        ActorRef<SimTransportActor.Command> a = spawn();
        cut.add(peer);
        CompletableFuture<List<LaneConnection>> f = connect(a, peer);
        a.tell(new SimTransportActor.Healed(peer)); // healed and cut again before the actor looked: waits on
        TIME.timePasses(TIMEOUT.minusMillis(1));
        handedOut.expectNoMessage(Duration.ofMillis(50));
        assertFalse(f.isDone());
        TIME.timePasses(Duration.ofMillis(1));
        Throwable cause = failure(f);
        assertInstanceOf(EndpointFailedException.class, cause);
        assertTrue(cause.getMessage().contains("no handshake got through within " + TIMEOUT), cause.getMessage());
        KIT.stop(a);
    }

    @Test
    void aPeerThatClosesDuringThePartitionFailsTheConnectWhenItHeals() {
        ActorRef<SimTransportActor.Command> a = spawn();
        cut.add(peer);
        CompletableFuture<List<LaneConnection>> f = connect(a, peer);
        processed(a);
        open.remove(peer);
        a.tell(new SimTransportActor.Healed(peer));
        Throwable cause = failure(f);
        assertTrue(cause.getMessage().contains("closed while a partition kept the connect"), cause.getMessage());
        KIT.stop(a);
    }

    @Test
    void stoppingDuringAConnectFailsIt() {
        ActorRef<SimTransportActor.Command> a = spawn();
        cut.add(peer);
        CompletableFuture<List<LaneConnection>> f = connect(a, peer);
        processed(a);
        KIT.stop(a);
        Throwable cause = failure(f);
        assertTrue(cause.getMessage().contains("stopped during the connect"), cause.getMessage());
    }
}
