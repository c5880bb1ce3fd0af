package dev.fenceline.transport.shm;

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
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.apache.pekko.actor.testkit.typed.javadsl.ActorTestKit;
import org.apache.pekko.actor.testkit.typed.javadsl.ManualTime;
import org.apache.pekko.actor.testkit.typed.javadsl.TestProbe;
import org.apache.pekko.actor.typed.ActorRef;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * The shm transport actor's lifecycle on manual time: connects answered, timed out, refused and
 * cut short by a peer that dies; peers watched once and reported gone once; quarantine and
 * housekeeping by timer. The backend is a recorder; the peers are real control segments in a
 * temporary directory, whose liveness the test decides.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class ShmTransportActorTest {
    private static final ActorTestKit KIT = ActorTestKit.create(ManualTime.config()
            .withFallback(ConfigFactory.parseString("pekko.log-dead-letters = off")));
    private static final ManualTime TIME = ManualTime.get(KIT.system());
    private static final Duration LIVENESS = Duration.ofMillis(100);
    private static final Duration CONNECT_TIMEOUT = Duration.ofSeconds(2);
    private static final Duration QUARANTINE = Duration.ofSeconds(1);
    private static final Duration WAIT = Duration.ofSeconds(5);

    @TempDir
    Path dir;
    private final Set<Inbox> dead = ConcurrentHashMap.newKeySet();
    private final AtomicLong conns = new AtomicLong();
    private TestProbe<String> events;
    private Inbox peer;
    private volatile RuntimeException refuse;

    /** Records every call; dials the test's peer. */
    private final ShmTransportActor.Backend backend = new ShmTransportActor.Backend() {
        @Override
        public String workerName() {
            return "actor-test";
        }

        @Override
        public ShmTransportActor.Dial dial(UUID peerId, byte[] address) {
            if (refuse != null) {
                throw refuse;
            }
            long conn = conns.incrementAndGet();
            events.getRef().tell("dial " + conn);
            return new ShmTransportActor.Dial(conn, peer, null);
        }

        @Override
        public List<LaneConnection> connected(ShmTransportActor.Dial d, int limit) {
            events.getRef().tell("connected " + d.conn() + " " + limit);
            return List.of();
        }

        @Override
        public void abandon(ShmTransportActor.Dial d) {
            events.getRef().tell("abandon " + d.conn());
        }

        @Override
        public void peerGone(Inbox p) {
            events.getRef().tell("gone " + p.name);
        }

        @Override
        public void peerStalled(Inbox p, Duration timeout) {
            events.getRef().tell("stalled " + p.name + " " + timeout);
        }

        @Override
        public void housekeeping() {
            events.getRef().tell("housekeeping");
        }

        @Override
        public void release(int slot) {
            events.getRef().tell("release " + slot);
        }
    };

    @BeforeEach
    void setUp() throws IOException {
        events = KIT.createTestProbe();
        peer = inbox("peer");
    }

    @AfterAll
    static void shutdown() {
        KIT.shutdownTestKit();
    }

    private Inbox inbox(String name) throws IOException {
        return Inbox.create(dir.resolve(Segments.processPrefix() + name), 64 << 10, 4, 4, UUID.randomUUID(), true);
    }

    private ActorRef<ShmTransportActor.Command> spawn() {
        return KIT.spawn(ShmTransportActor.create(backend, LIVENESS, CONNECT_TIMEOUT, QUARANTINE,
                p -> !dead.contains(p), ShmPeerActor.StallWatch.OFF));
    }

    /** Peers' heartbeats, as the test makes them beat. */
    private final java.util.Map<Inbox, Long> beats = new ConcurrentHashMap<>();
    /** The stall watch's clock, moved with manual time by {@link #ticks}. */
    private final AtomicLong nanos = new AtomicLong();

    /** How often the peer watcher read the stall watch's clock: once when made, then once per check. */
    private final AtomicLong clockReads = new AtomicLong();

    /** The stall watch's clock, counting its reads. */
    private long clock() {
        long now = nanos.get();
        clockReads.incrementAndGet();
        return now;
    }

    /** Waits until the peer watcher read the clock {@code reads} times (it runs on its own). */
    private void awaitClockReads(long reads) {
        long deadline = System.nanoTime() + WAIT.toNanos();
        while (clockReads.get() < reads) {
            assertTrue(System.nanoTime() < deadline, "the peer watcher read the clock " + clockReads.get()
                    + " times, not " + reads);
            Thread.onSpinWait();
        }
    }

    /**
     * {@code n} liveness ticks pass; the peer beats at each if {@code beating}. Each waits until the
     * peer watcher checked (it reads the heartbeat, then the clock), so the time and beats it reads are
     * the tick's and not a later one's.
     */
    private void ticks(int n, Inbox p, boolean beating) {
        for (int i = 0; i < n; i++) {
            if (beating) {
                beats.merge(p, 1L, Long::sum);
            }
            nanos.addAndGet(LIVENESS.toNanos());
            long reads = clockReads.get() + 1;
            TIME.timePasses(LIVENESS);
            awaitClockReads(reads);
        }
    }

    /** Skips the housekeeping ticks among the recorded calls. */
    private String next() {
        while (true) {
            String e = events.receiveMessage(WAIT);
            if (!e.equals("housekeeping")) {
                return e;
            }
        }
    }

    /** The next {@code n} recorded calls are housekeeping ticks, and nothing else. */
    private void onlyHousekeeping(int n) {
        List<String> got = events.receiveSeveralMessages(n, WAIT);
        assertTrue(got.stream().allMatch("housekeeping"::equals), got.toString());
    }

    private static Throwable failure(CompletableFuture<?> f) {
        ExecutionException e = assertThrows(ExecutionException.class, () -> f.get(WAIT.toSeconds(), TimeUnit.SECONDS));
        return e.getCause();
    }

    private CompletableFuture<List<LaneConnection>> connect(ActorRef<ShmTransportActor.Command> a) {
        CompletableFuture<List<LaneConnection>> f = new CompletableFuture<>();
        a.tell(new ShmTransportActor.Connect(UUID.randomUUID(), new byte[0], f));
        return f;
    }

    @Test
    void anAnsweredConnectHandsOutTheLanesAndItsTimerNeverFires() throws Exception {
        ActorRef<ShmTransportActor.Command> a = spawn();
        CompletableFuture<List<LaneConnection>> f = connect(a);
        assertEquals("dial 1", next());
        a.tell(new ShmTransportActor.Connected(1, 4096));
        assertEquals("connected 1 4096", next());
        assertEquals(List.of(), f.get(WAIT.toSeconds(), TimeUnit.SECONDS));
        a.tell(new ShmTransportActor.Connected(1, 4096)); // a repeated answer finds nothing
        TIME.timePasses(CONNECT_TIMEOUT.multipliedBy(2));
        onlyHousekeeping(40); // no abandon at the timeout, no second lanes
        KIT.stop(a);
    }

    @Test
    void anUnansweredConnectTimesOutAndALateAnswerFindsNothing() {
        ActorRef<ShmTransportActor.Command> a = spawn();
        CompletableFuture<List<LaneConnection>> f = connect(a);
        assertEquals("dial 1", next());
        TIME.timePasses(CONNECT_TIMEOUT.minusMillis(1));
        onlyHousekeeping(19);
        assertFalse(f.isDone(), "not before the timeout");
        TIME.timePasses(Duration.ofMillis(1));
        assertEquals("abandon 1", next());
        Throwable cause = failure(f);
        assertInstanceOf(EndpointFailedException.class, cause);
        assertTrue(cause.getMessage().contains("did not answer within " + CONNECT_TIMEOUT), cause.getMessage());
        a.tell(new ShmTransportActor.Connected(1, 4096));
        TIME.timePasses(LIVENESS);
        assertEquals("housekeeping", events.receiveMessage(WAIT));
        KIT.stop(a);
    }

    @Test
    void aPeerThatDiesDuringTheConnectFailsItAtTheNextCheckNotAtTheTimeout() {
        ActorRef<ShmTransportActor.Command> a = spawn();
        CompletableFuture<List<LaneConnection>> f = connect(a);
        assertEquals("dial 1", next());
        dead.add(peer);
        TIME.timePasses(LIVENESS);
        assertEquals("gone " + peer.name, next());
        assertEquals("abandon 1", next());
        Throwable cause = failure(f);
        assertInstanceOf(EndpointFailedException.class, cause);
        assertTrue(cause.getMessage().contains("the connect ended: the peer process " + peer.pid + " is gone"),
                cause.getMessage());
        TIME.timePasses(CONNECT_TIMEOUT); // its timer was cancelled: no second abandon
        onlyHousekeeping(20);
        KIT.stop(a);
    }

    @Test
    void aConnectWaitingWhenTheInboxBreaksFailsAtOnceNotAtTheTimeout() {
        ActorRef<ShmTransportActor.Command> a = spawn();
        CompletableFuture<List<LaneConnection>> f = connect(a);
        assertEquals("dial 1", next());
        a.tell(new ShmTransportActor.InboxBroke(() -> new EndpointFailedException("shm: the inbox broke (test)")));
        assertEquals("abandon 1", next());
        Throwable cause = failure(f);
        assertInstanceOf(EndpointFailedException.class, cause);
        assertTrue(cause.getMessage().contains("the inbox broke (test)"), cause.getMessage());
        TIME.timePasses(CONNECT_TIMEOUT); // its timer was cancelled: no second abandon
        onlyHousekeeping(20);
        KIT.stop(a);
    }

    @Test
    void aConnectedNamingTooSmallALimitFailsTheConnect() {
        ActorRef<ShmTransportActor.Command> a = spawn();
        CompletableFuture<List<LaneConnection>> f = connect(a);
        assertEquals("dial 1", next());
        a.tell(new ShmTransportActor.Connected(1, 63));
        assertEquals("abandon 1", next());
        Throwable cause = failure(f);
        assertInstanceOf(FencelineException.class, cause);
        assertTrue(cause.getMessage().contains("largest payload of 63 bytes"), cause.getMessage());
        KIT.stop(a);
    }

    @Test
    void aDialThatCannotBeMadeFailsTheConnectWithItsReasonAndTheActorServesOn() throws Exception {
        ActorRef<ShmTransportActor.Command> a = spawn();
        refuse = new EndpointFailedException("shm: the peer process 7 is gone");
        CompletableFuture<List<LaneConnection>> f = connect(a);
        assertSame(refuse, failure(f));
        refuse = new IllegalArgumentException("a truncated address");
        Throwable cause = failure(connect(a));
        assertInstanceOf(EndpointFailedException.class, cause);
        assertTrue(cause.getMessage().contains("a truncated address"), cause.getMessage());
        refuse = null;
        CompletableFuture<List<LaneConnection>> ok = connect(a);
        assertEquals("dial 1", next());
        a.tell(new ShmTransportActor.Connected(1, 64));
        assertEquals("connected 1 64", next());
        assertEquals(List.of(), ok.get(WAIT.toSeconds(), TimeUnit.SECONDS));
        KIT.stop(a);
    }

    @Test
    void aPeerSeenTwiceIsWatchedOnceAndReportedGoneOnce() throws IOException {
        ActorRef<ShmTransportActor.Command> a = spawn();
        Inbox other = inbox("other");
        a.tell(new ShmTransportActor.PeerSeen(peer));
        a.tell(new ShmTransportActor.PeerSeen(peer));
        a.tell(new ShmTransportActor.PeerSeen(other));
        TIME.timePasses(LIVENESS.multipliedBy(3));
        dead.add(peer);
        TIME.timePasses(LIVENESS);
        assertEquals("gone " + peer.name, next());
        for (int i = 0; i < 5; i++) {
            TIME.timePasses(LIVENESS);
            assertEquals("housekeeping", events.receiveMessage(WAIT)); // the other lives; peer reported once
        }
        dead.add(other);
        TIME.timePasses(LIVENESS);
        assertEquals("gone " + other.name, next());
        KIT.stop(a);
    }

    @Test
    void aPeerWhoseHeartbeatStandsStillForTheTimeoutIsReportedStalledOncePerStall() {
        Duration timeout = Duration.ofSeconds(1);
        ActorRef<ShmTransportActor.Command> a = KIT.spawn(ShmTransportActor.create(backend, LIVENESS,
                CONNECT_TIMEOUT, QUARANTINE, p -> !dead.contains(p),
                new ShmPeerActor.StallWatch(p -> beats.getOrDefault(p, 0L), timeout, this::clock)));
        a.tell(new ShmTransportActor.PeerSeen(peer));
        awaitClockReads(1); // the watcher is made: its stall clock starts now
        ticks(30, peer, true);
        onlyHousekeeping(30); // beating: never stalled
        ticks(9, peer, false);
        onlyHousekeeping(9); // 0.9 s still: not yet
        ticks(1, peer, false);
        assertEquals("stalled " + peer.name + " PT1S", next());
        ticks(20, peer, false);
        onlyHousekeeping(20); // the same stall is reported once
        ticks(1, peer, true); // it runs again
        ticks(10, peer, false);
        assertEquals("stalled " + peer.name + " PT1S", next()); // and a second stall is reported again
        KIT.stop(a);
    }

    @Test
    void aClosedRegistrationsSlotIsReleasedWhenItsQuarantineEnds() {
        ActorRef<ShmTransportActor.Command> a = spawn();
        a.tell(new ShmTransportActor.Quarantine(3, ByteBuffer.allocate(16)));
        a.tell(new ShmTransportActor.Quarantine(5, ByteBuffer.allocate(16)));
        TIME.timePasses(QUARANTINE.minusMillis(1));
        onlyHousekeeping(9); // no release before the quarantine ends
        TIME.timePasses(Duration.ofMillis(1));
        List<String> after = events.receiveSeveralMessages(3, WAIT);
        assertTrue(after.contains("release 3") && after.contains("release 5"), after.toString());
        KIT.stop(a);
    }

    @Test
    void stoppingDuringAConnectFailsItAndGivesItsGateBack() {
        ActorRef<ShmTransportActor.Command> a = spawn();
        CompletableFuture<List<LaneConnection>> f = connect(a);
        assertEquals("dial 1", next());
        KIT.stop(a);
        assertEquals("abandon 1", next());
        Throwable cause = failure(f);
        assertInstanceOf(EndpointFailedException.class, cause);
        assertTrue(cause.getMessage().contains("stopped during the connect"), cause.getMessage());
    }
}
