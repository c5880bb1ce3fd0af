package dev.fenceline.transport.ucx;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.typesafe.config.ConfigFactory;
import dev.fenceline.EndpointFailedException;
import dev.fenceline.FencelineException;
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
 * The ucx transport actor's lifecycle on manual time: connects answered, failed, timed out (and
 * answered late), refused at once, cut short by a peer process that dies and by the worker's stop;
 * peers watched at each tick and reported gone once; the greetings' tick; the quarantine of a closed
 * region. The backend is a recorder; which processes live is the test's to say.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class UcxTransportActorTest {
    private static final ActorTestKit KIT = ActorTestKit.create(ManualTime.config()
            .withFallback(ConfigFactory.parseString("pekko.log-dead-letters = off")));
    private static final ManualTime TIME = ManualTime.get(KIT.system());
    private static final Duration LIVENESS = Duration.ofMillis(100);
    private static final Duration CONNECT_TIMEOUT = Duration.ofSeconds(2);
    private static final Duration QUARANTINE = Duration.ofSeconds(1);
    private static final Duration WAIT = Duration.ofSeconds(5);

    private final Set<Long> deadPids = ConcurrentHashMap.newKeySet();
    private TestProbe<String> events;
    private volatile FencelineException refuse;

    private final UcxTransportActor.Backend backend = new UcxTransportActor.Backend() {
        @Override
        public String workerName() {
            return "actor-test";
        }

        @Override
        public void dial(long dial, UUID peer, byte[] address) {
            if (refuse != null) {
                throw refuse;
            }
            events.getRef().tell("dial " + dial);
        }

        @Override
        public void abandon(long dial) {
            events.getRef().tell("abandon " + dial);
        }

        @Override
        public void tick() {
            events.getRef().tell("tick");
        }

        @Override
        public void peerGone(UUID peer) {
            events.getRef().tell("gone " + peer);
        }

        @Override
        public boolean alive(long pid, long start) {
            return !deadPids.contains(pid);
        }
    };

    @BeforeEach
    void setUp() {
        events = KIT.createTestProbe();
    }

    @AfterAll
    static void shutdown() {
        KIT.shutdownTestKit();
    }

    private ActorRef<UcxTransportActor.Command> spawn() {
        return KIT.spawn(UcxTransportActor.create(backend, LIVENESS, CONNECT_TIMEOUT, QUARANTINE));
    }

    /** The next event that is not the periodic tick. */
    private String next() {
        while (true) {
            String e = events.receiveMessage(WAIT);
            if (!e.equals("tick")) {
                return e;
            }
        }
    }

    private static Throwable failure(CompletableFuture<?> f) {
        return assertThrows(ExecutionException.class, () -> f.get(5, TimeUnit.SECONDS)).getCause();
    }

    /** Nothing but ticks comes within a short while. */
    private void onlyTicksFollow() {
        java.util.List<String> got = new java.util.ArrayList<>();
        try {
            while (true) {
                got.add(events.receiveMessage(Duration.ofMillis(100)));
            }
        } catch (AssertionError none) {
            // nothing more came
        }
        assertTrue(got.stream().allMatch("tick"::equals), got::toString);
    }

    /** A lane that only records its close. */
    private LaneConnection lane(String name) {
        return new LaneConnection() {
            @Override
            public long id() {
                return 0;
            }

            @Override
            public String transport() {
                return UcxTransportProvider.NAME;
            }

            @Override
            public Set<dev.fenceline.LaneType> types() {
                return Set.of(dev.fenceline.LaneType.AM);
            }

            @Override
            public int maxFragment() {
                return 64;
            }

            @Override
            public void bind(dev.fenceline.spi.LaneListener listener) {
            }

            @Override
            public dev.fenceline.spi.PostStatus post(dev.fenceline.spi.TransportOp op) {
                throw new AssertionError("not posted to");
            }

            @Override
            public dev.fenceline.spi.PostStatus flush(long token) {
                throw new AssertionError("not flushed");
            }

            @Override
            public void fence() {
            }

            @Override
            public boolean deduplicates() {
                return true;
            }

            @Override
            public void close() {
                events.getRef().tell("closed " + name);
            }
        };
    }

    @Test
    void aConnectAnsweredGivesItsLanesAndStopsItsTimer() throws Exception {
        ActorRef<UcxTransportActor.Command> a = spawn();
        CompletableFuture<List<LaneConnection>> result = new CompletableFuture<>();
        a.tell(new UcxTransportActor.Connect(UUID.randomUUID(), new byte[0], result));
        assertEquals("dial 1", next());
        LaneConnection l = lane("l");
        a.tell(new UcxTransportActor.Dialed(1, List.of(l)));
        assertSame(l, result.get(5, TimeUnit.SECONDS).get(0));
        TIME.timePasses(CONNECT_TIMEOUT.plusSeconds(1));
        onlyTicksFollow(); // no abandon: the timer was cancelled
        a.tell(new UcxTransportActor.Dialed(1, List.of(lane("again")))); // a repeat finds nobody waiting
        assertEquals("closed again", next());
    }

    @Test
    void aConnectThatGetsNoAnswerTimesOutExactlyThenAndALateAnswerIsClosed() {
        ActorRef<UcxTransportActor.Command> a = spawn();
        CompletableFuture<List<LaneConnection>> result = new CompletableFuture<>();
        UUID peer = UUID.randomUUID();
        a.tell(new UcxTransportActor.Connect(peer, new byte[0], result));
        assertEquals("dial 1", next());
        TIME.timePasses(CONNECT_TIMEOUT.minusMillis(1));
        assertFalse(result.isDone(), "not before the connect-timeout");
        TIME.timePasses(Duration.ofMillis(1));
        assertEquals("abandon 1", next());
        Throwable t = failure(result);
        assertInstanceOf(EndpointFailedException.class, t);
        assertTrue(t.getMessage().contains(peer + " did not answer the connect within PT2S"), t.getMessage());
        a.tell(new UcxTransportActor.Dialed(1, List.of(lane("late"))));
        assertEquals("closed late", next());
    }

    @Test
    void aFailedOrRefusedConnectFailsWithItsReason() {
        ActorRef<UcxTransportActor.Command> a = spawn();
        CompletableFuture<List<LaneConnection>> first = new CompletableFuture<>();
        a.tell(new UcxTransportActor.Connect(UUID.randomUUID(), new byte[0], first));
        assertEquals("dial 1", next());
        a.tell(new UcxTransportActor.DialFailed(1, new EndpointFailedException("refused by the peer")));
        assertEquals("refused by the peer", failure(first).getMessage());
        refuse = new FencelineException("ucx: malformed peer address (3 bytes)");
        CompletableFuture<List<LaneConnection>> second = new CompletableFuture<>();
        a.tell(new UcxTransportActor.Connect(UUID.randomUUID(), new byte[3], second));
        assertTrue(failure(second).getMessage().contains("malformed peer address"));
        refuse = null;
        TIME.timePasses(CONNECT_TIMEOUT.plusSeconds(1));
        onlyTicksFollow(); // neither had a timer left running
    }

    @Test
    void aPeerProcessThatDiesIsReportedOnceAtTheNextTickAndEndsItsConnects() {
        ActorRef<UcxTransportActor.Command> a = spawn();
        UUID peer = UUID.randomUUID();
        a.tell(new UcxTransportActor.PeerSeen(peer, 4242, 1));
        a.tell(new UcxTransportActor.PeerSeen(peer, 4242, 1)); // seen twice, watched once
        CompletableFuture<List<LaneConnection>> result = new CompletableFuture<>();
        a.tell(new UcxTransportActor.Connect(peer, new byte[0], result));
        assertEquals("dial 1", next());
        TIME.timePasses(LIVENESS);
        onlyTicksFollow(); // alive
        deadPids.add(4242L);
        TIME.timePasses(LIVENESS);
        assertEquals("gone " + peer, next());
        assertEquals("abandon 1", next());
        assertTrue(failure(result).getMessage().contains("died during the connect"));
        TIME.timePasses(LIVENESS.multipliedBy(3));
        onlyTicksFollow(); // reported once
    }

    @Test
    void aForgottenPeersProcessIsNoLongerWatched() {
        ActorRef<UcxTransportActor.Command> a = spawn();
        UUID peer = UUID.randomUUID();
        UUID other = UUID.randomUUID();
        a.tell(new UcxTransportActor.PeerSeen(peer, 4343, 1));
        a.tell(new UcxTransportActor.PeerForgotten(peer));
        a.tell(new UcxTransportActor.PeerSeen(other, 4344, 1)); // still watched: shows the ticks look
        a.tell(new UcxTransportActor.Connect(other, new byte[0], new CompletableFuture<>()));
        assertEquals("dial 1", next()); // the actor runs, its tick timer set, the watches above taken in
        deadPids.add(4343L);
        deadPids.add(4344L);
        TIME.timePasses(LIVENESS);
        assertEquals("gone " + other, next());
        assertEquals("abandon 1", next()); // the connect to it ends with it
        TIME.timePasses(LIVENESS.multipliedBy(3));
        onlyTicksFollow(); // the forgotten peer's process end is never reported
    }

    @Test
    void theWorkersStopEndsTheConnectsOnTheirWay() {
        ActorRef<UcxTransportActor.Command> a = spawn();
        CompletableFuture<List<LaneConnection>> result = new CompletableFuture<>();
        a.tell(new UcxTransportActor.Connect(UUID.randomUUID(), new byte[0], result));
        assertEquals("dial 1", next());
        KIT.stop(a);
        assertEquals("abandon 1", next());
        assertTrue(failure(result).getMessage().contains("stopped during the connect"));
    }

    @Test
    void aClosedRegionIsReleasedWhenItsQuarantineEnds() {
        ActorRef<UcxTransportActor.Command> a = spawn();
        a.tell(new UcxTransportActor.Quarantine(() -> events.getRef().tell("released")));
        TIME.timePasses(QUARANTINE.minusMillis(1));
        onlyTicksFollow();
        TIME.timePasses(Duration.ofMillis(1));
        assertEquals("released", next());
    }
}
