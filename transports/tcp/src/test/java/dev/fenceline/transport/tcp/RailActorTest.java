package dev.fenceline.transport.tcp;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.typesafe.config.Config;
import com.typesafe.config.ConfigFactory;
import dev.fenceline.EndpointFailedException;
import dev.fenceline.FencelineException;
import dev.fenceline.spi.LaneConnection;
import dev.fenceline.spi.LaneListener;
import dev.fenceline.spi.support.ReconnectPolicy;
import io.netty.channel.embedded.EmbeddedChannel;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.apache.pekko.actor.testkit.typed.javadsl.ActorTestKit;
import org.apache.pekko.actor.testkit.typed.javadsl.ManualTime;
import org.apache.pekko.actor.testkit.typed.javadsl.TestProbe;
import org.apache.pekko.actor.typed.ActorRef;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * A rail's lifecycle as an actor, on manual time: no socket, no sleep. The connector hands out
 * attempts the test completes by hand; the lanes are real {@link TcpLane}s on embedded channels.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class RailActorTest {
    private static final ActorTestKit KIT = ActorTestKit.create(ManualTime.config()
            .withFallback(ConfigFactory.parseString("pekko.log-dead-letters = off")));
    private static final ManualTime TIME = ManualTime.get(KIT.system());
    private static final Duration CONNECT_TIMEOUT = Duration.ofSeconds(3);
    /** min 100 ms, max 400 ms, give up after 2 s, stable after 1 s. */
    private static final ReconnectPolicy POLICY = new ReconnectPolicy(Duration.ofMillis(100), Duration.ofMillis(400),
            Duration.ofSeconds(2), Duration.ofSeconds(1));

    /** The connector: every attempt the rail starts, for the test to answer. */
    private final LinkedBlockingQueue<CompletableFuture<TcpLane>> attempts = new LinkedBlockingQueue<>();
    private final List<EmbeddedChannel> channels = new ArrayList<>();
    private final AtomicLong nanos = new AtomicLong(1_000_000_000L);
    private volatile boolean closed;
    private TcpSettings settings;
    private TestProbe<RailActor.FirstOutcome> first;
    private final LinkedBlockingQueue<LaneConnection> recovered = new LinkedBlockingQueue<>();
    private Rail rail;

    private final RailActor.Connector connector = new RailActor.Connector() {
        @Override
        public CompletableFuture<TcpLane> open(Rail r) {
            CompletableFuture<TcpLane> f = new CompletableFuture<>();
            attempts.add(f);
            return f;
        }

        @Override
        public boolean closed() {
            return closed;
        }

        @Override
        public String workerName() {
            return "rail-test";
        }
    };

    private final LaneListener listener = new LaneListener() {
        @Override
        public void onCompleted(long token, long value) {
        }

        @Override
        public void onFailed(long token, FencelineException error) {
        }

        @Override
        public void onFlushed(long token) {
        }

        @Override
        public void onFlushFailed(long token, FencelineException error) {
        }

        @Override
        public void onReady() {
        }

        @Override
        public void onLaneFailed(Throwable cause) {
        }

        @Override
        public void onReplaced(LaneConnection replacement) {
        }

        @Override
        public void onRecovered(LaneConnection connection) {
            recovered.add(connection);
        }

        @Override
        public void onLaneAdded(LaneConnection connection) {
        }
    };

    @BeforeEach
    void setUp() {
        Config section = ConfigFactory.parseString("secret = \"" + TcpConfigs.SECRET + "\"")
                .withFallback(ConfigFactory.defaultReference().getConfig(TcpSettings.SECTION));
        settings = TcpSettings.fromSection(section);
        first = KIT.createTestProbe();
        rail = new Rail(0, null, new InetSocketAddress("127.0.0.1", 9), UUID.randomUUID());
    }

    @AfterEach
    void tearDown() {
        channels.forEach(EmbeddedChannel::finishAndReleaseAll);
    }

    @AfterAll
    static void shutdown() {
        KIT.shutdownTestKit();
    }

    private ActorRef<RailActor.Command> spawn() {
        return KIT.spawn(RailActor.create(rail, connector, POLICY, CONNECT_TIMEOUT, nanos::get, () -> 0L,
                first.getRef()::tell));
    }

    private TcpLane lane() {
        EmbeddedChannel ch = new EmbeddedChannel();
        channels.add(ch);
        TcpLane l = new TcpLane(rail, ch, settings, settings.maxFragment());
        l.bind(listener);
        return l;
    }

    private CompletableFuture<TcpLane> nextAttempt() throws InterruptedException {
        CompletableFuture<TcpLane> f = attempts.poll(10, TimeUnit.SECONDS);
        assertNotNull(f, "the rail started no attempt");
        return f;
    }

    /**
     * @return the rail's state, once it handled everything told before: time must not move on
     *     before a timer it is about to start exists
     */
    private String state(ActorRef<RailActor.Command> ref) {
        TestProbe<String> p = KIT.createTestProbe();
        ref.tell(new RailActor.Inspect(p.getRef()));
        return p.receiveMessage();
    }

    /**
     * Asks until the rail handled an attempt's outcome, which reaches it through its own mailbox
     * after the test completed the attempt; virtual time stands still meanwhile.
     */
    private void awaitState(ActorRef<RailActor.Command> ref, String expected) {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        String now = state(ref);
        while (!now.equals(expected) && System.nanoTime() < deadline) {
            now = state(ref);
        }
        assertEquals(expected, now);
    }

    private void tellAndExpect(ActorRef<RailActor.Command> ref, RailActor.Command c, String state) {
        ref.tell(c);
        assertEquals(state, state(ref));
    }

    /** Lets virtual time pass in steps, advancing the rail's nanosecond clock with it. */
    private void passes(Duration d) {
        nanos.addAndGet(d.toNanos());
        TIME.timePasses(d);
    }

    /** Brings the rail up and returns its first lane. */
    private TcpLane up(ActorRef<RailActor.Command> ref) throws InterruptedException {
        TcpLane l = lane();
        nextAttempt().complete(l);
        RailActor.FirstOutcome o = first.receiveMessage();
        assertSame(l, o.lane());
        assertNull(o.cause());
        return l;
    }

    private void assertNoAttemptFor(Duration d) {
        passes(d);
        assertNull(attempts.peek(), "no attempt was due within " + d);
    }

    @Test
    void aFirstConnectionThatCannotBeMadeIsReportedAndTheRailStops() throws Exception {
        ActorRef<RailActor.Command> ref = spawn();
        EndpointFailedException refused = new EndpointFailedException("connection refused");
        nextAttempt().completeExceptionally(refused);
        RailActor.FirstOutcome o = first.receiveMessage();
        assertNull(o.lane());
        assertSame(refused, o.cause());
        first.expectTerminated(ref);
        assertNoAttemptFor(Duration.ofSeconds(10));
    }

    @Test
    void aHandshakeThatTimesOutAbandonsTheAttempt() throws Exception {
        ActorRef<RailActor.Command> ref = spawn();
        CompletableFuture<TcpLane> attempt = nextAttempt();
        assertEquals("connecting", state(ref));
        passes(CONNECT_TIMEOUT.minusMillis(1));
        assertFalse(attempt.isDone(), "not yet at the timeout");
        passes(Duration.ofMillis(1));
        RailActor.FirstOutcome o = first.receiveMessage();
        assertTrue(attempt.isCompletedExceptionally(), "the attempt is abandoned, so its channel closes");
        assertInstanceOf(EndpointFailedException.class, o.cause());
        assertTrue(o.cause().getMessage().contains("took longer than " + CONNECT_TIMEOUT), o.cause().getMessage());
    }

    @Test
    void aLostLaneIsReconnectedAfterTheBackoffAndHandedBackAsRecovered() throws Exception {
        ActorRef<RailActor.Command> ref = spawn();
        TcpLane l = up(ref);
        passes(Duration.ofSeconds(2)); // stable
        tellAndExpect(ref, new RailActor.Lost(l, listener, new Exception("reset")), "backingOff");
        // Jitter 0 draws the lower bound: half of min-backoff.
        assertNoAttemptFor(Duration.ofMillis(49));
        passes(Duration.ofMillis(1));
        TcpLane again = lane();
        nextAttempt().complete(again);
        assertSame(again, recovered.poll(10, TimeUnit.SECONDS));
        first.expectNoMessage(Duration.ZERO);
    }

    @Test
    void aPeerThatDiesDuringReconnectIsRetriedWithLongerDelaysUntilTheGiveUpTime() throws Exception {
        ActorRef<RailActor.Command> ref = spawn();
        TcpLane l = up(ref);
        passes(Duration.ofSeconds(2));
        tellAndExpect(ref, new RailActor.Lost(l, listener, new Exception("reset")), "backingOff");
        // Jitter 0: half of 100, 200, 400, then 400 (the maximum) each; the attempts fail at once.
        long[] delaysMs = {50, 100, 200, 200, 200, 200, 200, 200, 200, 200, 200};
        long waited = 0;
        for (long d : delaysMs) {
            assertNoAttemptFor(Duration.ofMillis(d - 1));
            passes(Duration.ofMillis(1));
            nextAttempt().completeExceptionally(new EndpointFailedException("connection refused"));
            awaitState(ref, "backingOff");
            waited += d;
        }
        assertEquals(1_950, waited, "the last retry within the 2 s give-up time");
        passes(Duration.ofMillis(200));
        nextAttempt().completeExceptionally(new EndpointFailedException("connection refused"));
        first.expectTerminated(ref); // failed 2.15 s after the loss: it gives up
        assertNoAttemptFor(Duration.ofSeconds(10));
        assertNull(recovered.poll(), "nothing was recovered");
    }

    @Test
    void aRailThatFlapsKeepsItsBackoffInsteadOfRetryingAtFullSpeed() throws Exception {
        ActorRef<RailActor.Command> ref = spawn();
        TcpLane l = up(ref);
        passes(Duration.ofSeconds(2));
        tellAndExpect(ref, new RailActor.Lost(l, listener, new Exception("reset")), "backingOff");
        passes(Duration.ofMillis(50));
        nextAttempt().completeExceptionally(new EndpointFailedException("refused")); // delay now 200 ms
        awaitState(ref, "backingOff");
        passes(Duration.ofMillis(100));
        TcpLane second = lane();
        nextAttempt().complete(second);
        assertSame(second, recovered.poll(10, TimeUnit.SECONDS));
        // Dies again at once: the series goes on at 200 ms (jittered to 100), not back to 50.
        tellAndExpect(ref, new RailActor.Lost(second, listener, new Exception("reset again")), "backingOff");
        assertNoAttemptFor(Duration.ofMillis(99));
        passes(Duration.ofMillis(1));
        nextAttempt().complete(lane());
        assertNotNull(recovered.poll(10, TimeUnit.SECONDS));
    }

    @Test
    void aRefusalFromThePeerEndsReconnectingAtOnce() throws Exception {
        ActorRef<RailActor.Command> ref = spawn();
        TcpLane l = up(ref);
        tellAndExpect(ref, new RailActor.Lost(l, listener, new Exception("reset")), "backingOff");
        passes(Duration.ofMillis(50));
        nextAttempt().completeExceptionally(new LaneHandler.RefusedException("tcp: downed", true));
        first.expectTerminated(ref);
        assertNoAttemptFor(Duration.ofSeconds(10));
    }

    /**
     * A refusal that may not be the peer's (with a shared secret, one before the server proved
     * itself: whatever answered at the peer's address) is one more failed attempt: the rail goes on
     * reconnecting, and recovers once the peer answers.
     */
    @Test
    void aRefusalThatMayNotBeThePeersIsOneMoreFailedAttempt() throws Exception {
        ActorRef<RailActor.Command> ref = spawn();
        TcpLane l = up(ref);
        tellAndExpect(ref, new RailActor.Lost(l, listener, new Exception("reset")), "backingOff");
        passes(Duration.ofMillis(50));
        nextAttempt().completeExceptionally(new LaneHandler.RefusedException("tcp: refused by an impostor", false));
        awaitState(ref, "backingOff");
        passes(Duration.ofMillis(100));
        TcpLane back = lane();
        nextAttempt().complete(back);
        assertSame(back, recovered.poll(10, TimeUnit.SECONDS), "the rail recovered");
    }

    @Test
    void closingTheLaneDuringBackoffStopsTheRail() throws Exception {
        ActorRef<RailActor.Command> ref = spawn();
        TcpLane l = up(ref);
        tellAndExpect(ref, new RailActor.Lost(l, listener, new Exception("reset")), "backingOff");
        ref.tell(new RailActor.Stop(l));
        first.expectTerminated(ref);
        assertNoAttemptFor(Duration.ofSeconds(10));
    }

    @Test
    void closingTheLaneDuringAReconnectClosesWhatTheAttemptBrings() throws Exception {
        ActorRef<RailActor.Command> ref = spawn();
        TcpLane l = up(ref);
        tellAndExpect(ref, new RailActor.Lost(l, listener, new Exception("reset")), "backingOff");
        passes(Duration.ofMillis(50));
        CompletableFuture<TcpLane> attempt = nextAttempt();
        ref.tell(new RailActor.Stop(l));
        first.expectTerminated(ref);
        assertTrue(attempt.isCompletedExceptionally(), "the attempt is abandoned");
        assertNull(recovered.poll(), "the endpoint that let go gets nothing");
    }

    @Test
    void eventsAboutAnOlderLaneAreIgnored() throws Exception {
        ActorRef<RailActor.Command> ref = spawn();
        TcpLane l = up(ref);
        passes(Duration.ofSeconds(2));
        tellAndExpect(ref, new RailActor.Lost(l, listener, new Exception("reset")), "backingOff");
        passes(Duration.ofMillis(50));
        TcpLane second = lane();
        nextAttempt().complete(second);
        assertSame(second, recovered.poll(10, TimeUnit.SECONDS));
        ref.tell(new RailActor.Stop(l)); // the old lane's close: not this rail's current lane
        tellAndExpect(ref, new RailActor.Lost(l, listener, new Exception("late")), "up");
        assertNoAttemptFor(Duration.ofSeconds(5));
        ref.tell(new RailActor.Stop(second));
        first.expectTerminated(ref);
    }

    @Test
    void aClosedTransportEndsTheRailInsteadOfRetrying() throws Exception {
        ActorRef<RailActor.Command> ref = spawn();
        TcpLane l = up(ref);
        tellAndExpect(ref, new RailActor.Lost(l, listener, new Exception("reset")), "backingOff");
        passes(Duration.ofMillis(50));
        CompletableFuture<TcpLane> attempt = nextAttempt();
        closed = true;
        attempt.completeExceptionally(new EndpointFailedException("tcp: the transport is closed"));
        first.expectTerminated(ref);
        assertNoAttemptFor(Duration.ofSeconds(10));
    }
}
