package dev.fenceline.testkit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.typesafe.config.Config;
import dev.fenceline.AtomicOp;
import dev.fenceline.EndpointFailedException;
import dev.fenceline.FencelineException;
import dev.fenceline.LaneType;
import dev.fenceline.spi.LaneConnection;
import dev.fenceline.spi.PostStatus;
import dev.fenceline.spi.Revocation;
import dev.fenceline.spi.Transport;
import dev.fenceline.spi.TransportOp;
import dev.fenceline.testkit.ContractEvents.Completed;
import dev.fenceline.testkit.ContractEvents.Failed;
import dev.fenceline.testkit.ContractEvents.LaneFailed;
import dev.fenceline.testkit.ContractEvents.Ready;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.Timeout;

/**
 * The SPI contract every transport keeps, checked on its lanes directly, below any endpoint
 * (docs/transport-spi.md, section 3): operations answered once each and a flush after them;
 * {@code NO_RESOURCE} takes nothing and {@code onReady} follows once there is room; a failure that
 * came before {@code bind} is reported at {@code bind}; after {@code abort} or {@code close} the
 * lane's {@code revoke()} is the truth (a {@code REVOKED} operation is never applied nor reported,
 * an {@code ANSWER_FOLLOWS} one is answered once, a get's buffer is not written unless its answer
 * follows); and answers that come after the lane was given up go nowhere while the transport keeps
 * serving new connections.
 *
 * <p>Two instances of the transport run in this JVM as an origin and a target worker, their control
 * actors on an actor system of the suite's (the package's {@code ContractWorkers} starts and stops
 * them). The target's memory is one region; to hold operations
 * back the suite stops the target's side inside the region's accessors (the target thread waits,
 * as a slow target would), and lets it go again. A backend's test extends this class, names the
 * transport, gives its section and says how one of its connections breaks.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
@Timeout(value = 120, unit = TimeUnit.SECONDS)
public abstract class TransportContractSuite {
    static final Duration WAIT = Duration.ofSeconds(10);
    /** Bytes of the target region. */
    static final int REGION = 1 << 16;
    /** The key id of the target region. */
    static final long KEY_ID = 42;

    private ContractWorkers workers;
    private final List<LaneConnection> opened = new ArrayList<>();
    private final long originId = ThreadLocalRandom.current().nextLong() & Long.MAX_VALUE;
    private long sequence;

    /** For subclasses. */
    protected TransportContractSuite() {
    }

    /** @return the name of the transport under test (its provider's {@code name()}) */
    protected abstract String transportName();

    /**
     * @return the transport's own section ({@code fenceline.transport.<name>}, without the path) for
     *     both workers, over its reference defaults; give it a small {@code queue-depth} (8), so that
     *     a lane runs out of room quickly
     */
    protected abstract Config section();

    /**
     * Breaks a connection as the backend would find it broken (a socket closed, a peer gone).
     *
     * @param lane a lane of the transport, not yet bound
     */
    protected abstract void breakConnection(LaneConnection lane);

    /**
     * A transport's own check of how its lane carried the operations of
     * {@code operationsAreAnsweredOnceAndAFlushFollowsThem}, once all were answered (default: none).
     *
     * @param lane the lane they went on
     */
    protected void afterOperations(LaneConnection lane) {
    }

    /** @return which of a connect's lanes the suite checks (default 0, the first) */
    protected int laneIndex() {
        return 0;
    }

    /**
     * @param region the target's region, a direct buffer
     * @return the address peers name for its first byte; a backend that reaches the target's memory
     *     itself (cross-memory attach) needs the real one, others may take the default, a made-up one
     */
    protected long baseAddress(ByteBuffer region) {
        return 1L << 32;
    }

    /**
     * @return whether the target's region is memory its transport allocates to share
     *     ({@link Transport#allocateShared}), which a backend may reach without the target's help,
     *     rather than a buffer registered with it (default)
     */
    protected boolean sharedRegion() {
        return false;
    }

    /**
     * @return whether the target's software applies the lane's puts (default); false for a lane
     *     whose backend stores into the region itself while it waits for completion (UCT's stores
     *     into a shared region), which the tests that stop the target to hold operations cannot stop
     */
    protected boolean targetAppliesPuts() {
        return true;
    }

    /** Starts the two workers' transports and registers the target's region. */
    @BeforeAll
    void startTransports() {
        workers = ContractWorkers.start(transportName(), section(), sharedRegion(), this::baseAddress);
    }

    /** Each test starts on zeroed memory. */
    @BeforeEach
    void zeroMemory() {
        workers.memory.zero();
    }

    /** Lets a stopped target go and closes what a test left open. */
    @AfterEach
    void releaseAndClose() {
        workers.memory.release();
        opened.forEach(LaneConnection::close);
        opened.clear();
    }

    /** Stops both transports and the actor system. */
    @AfterAll
    void stopTransports() {
        if (workers != null) {
            workers.close();
        }
    }

    // ------------------------------------------------------------------ the contracts

    /** Each operation is answered exactly once (or done on return), and a flush after them follows them. */
    @Test
    void operationsAreAnsweredOnceAndAFlushFollowsThem() {
        ContractLane l = connect();
        l.lane.bind(l.events);
        Map<Long, ContractLane.Posted> posted = new LinkedHashMap<>();
        for (int i = 0; i < 4; i++) {
            posted.put((long) i + 1, l.put(i + 1, 8 * i, 1000L + i));
        }
        ContractLane.Posted get = l.get(10, 0);
        posted.put(10L, get);
        boolean atomics = l.lane.types().contains(LaneType.AMO) || l.lane.types().contains(LaneType.AM);
        if (atomics) {
            posted.put(11L, l.fetchAdd(11, 64, 5));
            posted.put(12L, l.fetchAdd(12, 64, 5));
        }
        PostStatus flush = l.lane.flush(99);
        Map<Long, Object> answers = l.awaitAnswers(posted, flush == PostStatus.IN_PROGRESS ? 99L : null);
        for (int i = 0; i < 4; i++) {
            assertEquals(1000L + i, workers.memory.word(8 * i), "put " + (i + 1) + " landed");
        }
        assertEquals(1000L, get.local.getLong(0), "the get read what the put before it wrote");
        if (atomics) {
            List<Long> fetched = List.of(l.value(posted.get(11L), answers.get(11L)),
                    l.value(posted.get(12L), answers.get(12L)));
            assertTrue(fetched.equals(List.of(0L, 5L)), "two fetch-adds of 5 from 0 fetch 0 then 5: " + fetched);
            assertEquals(10, workers.memory.word(64));
        }
        afterOperations(l.lane);
    }

    /** An operation larger than the lane's largest fragment is refused at post, typed, and the lane serves on. */
    @Test
    void anOperationLargerThanTheLaneCarriesIsRefusedAtPost() {
        ContractLane l = connect();
        l.lane.bind(l.events);
        Assumptions.assumeTrue(l.lane.maxFragment() < (64 << 20), "a lane limit of " + l.lane.maxFragment()
                + " bytes: too large a buffer to make for the test");
        TransportOp big = l.oversizedPut(1);
        FencelineException e = assertThrows(FencelineException.class, () -> l.lane.post(big));
        assertTrue(e.getMessage().contains(String.valueOf(l.lane.maxFragment())), "names the limit: " + e.getMessage());
        ContractLane.Posted next = l.put(2, 0, 42);
        l.awaitAnswers(Map.of(2L, next), null);
        assertEquals(42, workers.memory.word(0), "the lane serves on");
    }

    /** {@code NO_RESOURCE} takes nothing; {@code onReady} comes once there is room, and the same operation then goes. */
    @Test
    void noResourceTakesNothingAndReadyFollowsWhenThereIsRoom() {
        ContractLane l = connect();
        l.lane.bind(l.events);
        Assumptions.assumeTrue(targetAppliesPuts(), "the lane's backend applies puts itself: stopping the target"
                + " holds none of them");
        workers.memory.hold();
        Map<Long, ContractLane.Posted> accepted = new LinkedHashMap<>();
        ContractLane.Posted refused = null;
        for (int i = 0; i < 10_000 && refused == null; i++) {
            long token = i + 1;
            ContractLane.Posted p = l.put(token, 8 * (i % 4096), token);
            if (p.status == PostStatus.NO_RESOURCE) {
                refused = p;
            } else if (p.status == PostStatus.COMPLETED && i == 0) {
                workers.memory.release();
                Assumptions.abort("this lane completes every post on return: it has no queue to run out of");
            } else {
                accepted.put(token, p);
            }
        }
        assertNotNull(refused, "10,000 posts to a stopped target were all taken: the lane never ran out of room");
        assertNull(l.events.poll(Duration.ofMillis(100), Ready.class), "onReady before any room was made");
        workers.memory.release();
        l.events.expect(Ready.class);
        l.awaitAnswers(accepted, null);
        assertEquals(0, workers.memory.word(refused.offset), "the operation refused with NO_RESOURCE was not applied");
        ContractLane.Posted again = l.put(refused.token, refused.offset, refused.token);
        assertTrue(again.status != PostStatus.NO_RESOURCE, "after onReady the lane takes the refused operation");
        l.awaitAnswers(Map.of(again.token, again), null);
        assertEquals(refused.token, workers.memory.word(refused.offset));
    }

    /** A connection that broke before the endpoint bound it says so at {@code bind}. */
    @Test
    void aFailureBeforeBindIsReportedAtBind() {
        ContractLane l = connect();
        breakConnection(l.lane);
        l.lane.bind(l.events);
        LaneFailed f = l.events.expect(LaneFailed.class);
        assertNotNull(f.cause(), "a failure carries its cause");
        l.events.poll(Duration.ofMillis(200), Void.class); // whatever else comes meanwhile
        assertEquals(1, l.events.count(LaneFailed.class), "the failure is reported once");
    }

    /**
     * Given up with {@code abort} while the target is stopped: {@code revoke()} is the truth once the
     * target runs again, and the answers that follow reach the listener after the abort.
     */
    @Test
    void afterAbortRevokeTellsTheTruthAndOwedAnswersStillCome() {
        giveUpWhileTheTargetIsStopped(true);
    }

    /**
     * Closed while the target is stopped: the same, and the answers that come late go nowhere while
     * the transport serves a new connection.
     */
    @Test
    void afterCloseLateAnswersGoNowhereAndTheTransportServesOn() {
        giveUpWhileTheTargetIsStopped(false);
        ContractLane fresh = connect();
        fresh.lane.bind(fresh.events);
        ContractLane.Posted p = fresh.put(1, 8 * 2000, 77);
        PostStatus flush = fresh.lane.flush(2);
        fresh.awaitAnswers(Map.of(1L, p), flush == PostStatus.IN_PROGRESS ? 2L : null);
        assertEquals(77, workers.memory.word(8 * 2000), "a new connection works after the late answers");
    }

    /**
     * An endpoint closes a lane and then revokes it (a revocation always follows a close or an
     * abort, and a lane may settle itself at close): a connection made in between, which may take
     * over what the closed one let go (a slot, an id), keeps working after the revocation.
     */
    @Test
    void aRevocationAfterCloseLeavesAConnectionMadeMeanwhileWorking() {
        ContractLane old = connect();
        old.lane.bind(old.events);
        old.lane.close();
        ContractLane fresh = connect();
        fresh.lane.bind(fresh.events);
        old.lane.revoke();
        ContractLane.Posted p = fresh.put(1, 8 * 2100, 55);
        PostStatus flush = fresh.lane.flush(2);
        fresh.awaitAnswers(Map.of(1L, p), flush == PostStatus.IN_PROGRESS ? 2L : null);
        assertEquals(55, workers.memory.word(8 * 2100), "the connection made meanwhile works");
    }

    /**
     * An operation whose first copy went on another lane of the same exactly-once scope and was
     * applied there, sent again on this lane marked {@link TransportOp#mayHaveApplied()}, is never
     * applied a second time, whatever path the lane would take for a new one (a store into mapped
     * memory, hardware): it is answered with the first copy's result where the target's window sees
     * it, or refused with an {@link dev.fenceline.OutcomeUnknownException} by a lane that cannot
     * carry it there. A fetch-add where the lane carries atomics or messages, else a put.
     */
    @Test
    void aCopyThatMayHaveBeenAppliedIsNeverAppliedTwice() {
        ContractLane l = connect();
        l.lane.bind(l.events);
        org.junit.jupiter.api.Assumptions.assumeTrue(l.lane.deduplicates()
                && l.lane.exactlyOnceScope() instanceof dev.fenceline.spi.support.ExactlyOnceScope,
                transportName() + "'s lane recognizes no copies");
        boolean atomic = l.lane.types().contains(LaneType.AMO) || l.lane.types().contains(LaneType.AM);
        String proof = ((dev.fenceline.spi.support.ExactlyOnceScope) l.lane.exactlyOnceScope()).proof();
        long seq = ++sequence;
        long low = Math.max(0, seq - 64);
        ByteBuffer five = ByteBuffer.allocateDirect(8).order(ByteOrder.nativeOrder()).putLong(0, 5);
        dev.fenceline.spi.support.ExactlyOnceWindows windows = workers.targetWindows;
        ContractTarget memory = workers.memory;
        long at = memory.base + 64;
        dev.fenceline.spi.support.ExactlyOnceWindows.Window w = windows.retain(workers.originWorker, proof, originId);
        assertNotNull(w, "a window for the origin");
        try {
            synchronized (w.window()) { // as the other lane's target applied the first copy
                windows.exactlyOnce().apply(w.window(), originId, seq, low, () -> {
                    if (atomic) {
                        return memory.atomic(KEY_ID, at, 8, AtomicOp.ADD, 5);
                    }
                    memory.put(KEY_ID, at, five.duplicate());
                    return 0;
                });
            }
        } finally {
            windows.release(w);
        }
        ByteBuffer nine = ByteBuffer.allocateDirect(8).order(ByteOrder.nativeOrder()).putLong(0, 9);
        TransportOp op = (atomic ? TransportOp.atomic(TransportOp.Kind.ATOMIC_FETCH, 1, at, workers.key, AtomicOp.ADD, 8,
                5, 0) : TransportOp.rma(TransportOp.Kind.PUT, 1, at, workers.key, nine))
                .identify(originId, seq, low).mayHaveApplied(true);
        PostStatus status = l.lane.post(op);
        assertTrue(status != PostStatus.NO_RESOURCE, "NO_RESOURCE on an idle lane");
        Object answer = status == PostStatus.COMPLETED ? null : l.events.answerOf(1);
        if (answer instanceof Failed f) {
            assertTrue(f.error() instanceof dev.fenceline.OutcomeUnknownException, "refused, but not as unknown: "
                    + f.error());
        } else if (atomic) {
            long fetched = status == PostStatus.COMPLETED ? op.result() : ((Completed) answer).value();
            assertEquals(0L, fetched, "the first copy's result");
        }
        assertEquals(5, workers.memory.word(64), "applied once: the first copy's write stands");
    }

    private void giveUpWhileTheTargetIsStopped(boolean abort) {
        Assumptions.assumeTrue(targetAppliesPuts(), "the lane's backend applies puts itself: stopping the target"
                + " holds none of them");
        ContractLane l = connect();
        l.lane.bind(l.events);
        workers.memory.hold();
        Map<Long, ContractLane.Posted> posted = new LinkedHashMap<>();
        for (int i = 0; i < 4; i++) {
            ContractLane.Posted p = l.put(i + 1, 8 * (100 + i), 500L + i);
            if (p.status == PostStatus.COMPLETED) {
                workers.memory.release();
                Assumptions.abort("this lane completes every post on return: nothing is ever outstanding");
            }
            if (p.status == PostStatus.IN_PROGRESS) {
                posted.put(p.token, p);
            }
        }
        ContractLane.Posted get = l.get(9, 8 * 100);
        get.local.putLong(0, 0x5EA1EDL); // a sentinel: written only by an answer that follows
        if (get.status == PostStatus.IN_PROGRESS) {
            posted.put(get.token, get);
        }
        assertFalse(posted.isEmpty(), "a stopped target left nothing outstanding");
        workers.memory.awaitEntered(1); // the target took the first one and is inside it
        if (abort) {
            l.lane.abort(new EndpointFailedException("contract: given up"));
        } else {
            l.lane.close();
        }
        Revocation r = l.lane.revoke();
        Map<Long, Revocation.Fate> fates = new HashMap<>();
        posted.keySet().forEach(t -> fates.put(t, r.fate(t)));
        workers.memory.release();
        System.out.println(transportName() + " lane " + l.lane.id() + (abort ? " aborted" : " closed")
                + " with the target stopped inside operation 1: " + new java.util.TreeMap<>(fates));
        // What is owed comes; then the target has run everything it will ever take of this lane.
        for (Map.Entry<Long, Revocation.Fate> e : fates.entrySet()) {
            if (e.getValue() == Revocation.Fate.ANSWER_FOLLOWS) {
                l.events.answerOf(e.getKey());
            }
        }
        settle();
        Map<Long, Integer> reported = l.events.answerCounts();
        for (Map.Entry<Long, Revocation.Fate> e : fates.entrySet()) {
            long token = e.getKey();
            ContractLane.Posted p = posted.get(token);
            int n = reported.getOrDefault(token, 0);
            assertTrue(n <= 1, "operation " + token + " was answered " + n + " times");
            switch (e.getValue()) {
                case REVOKED -> {
                    assertEquals(0, n, "operation " + token + " was REVOKED but answered");
                    if (p != get) {
                        assertEquals(0, workers.memory.word(p.offset), "operation " + token + " was REVOKED but applied");
                    }
                }
                case ANSWER_FOLLOWS -> assertEquals(1, n, "operation " + token + "'s answer was promised");
                default -> {
                    // STOPPED or MAY_STILL_APPLY: applied or not; the endpoint decides what to re-send
                }
            }
            if (p == get && e.getValue() != Revocation.Fate.ANSWER_FOLLOWS) {
                assertEquals(0x5EA1EDL, get.local.getLong(0), "the get's buffer was written after the lane was given"
                        + " up without its answer following (" + e.getValue() + ")");
            }
        }
    }

    /** A round trip on a new connection, so that the target has run what it had before. */
    private void settle() {
        ContractLane s = connect();
        s.lane.bind(s.events);
        ContractLane.Posted p = s.put(1, 8 * 3000, 1);
        PostStatus flush = s.lane.flush(2);
        s.awaitAnswers(Map.of(1L, p), flush == PostStatus.IN_PROGRESS ? 2L : null);
        s.lane.close();
    }

    /**
     * @return how many connections {@link #lanesClosedWithoutARevocationAreLetGo} makes and closes: more
     *     than the transport's configured room for lanes ({@link #section()}), or 0 to skip it
     */
    protected int connectionsToCycle() {
        return 0;
    }

    /**
     * A lane closed without a revocation (an endpoint closes lanes it never used: ones that came
     * after its connect timed out, or when it closes while connecting) is let go by its transport:
     * connecting and closing again and again never runs out of the transport's room for lanes.
     */
    @Test
    void lanesClosedWithoutARevocationAreLetGo() throws Exception {
        org.junit.jupiter.api.Assumptions.assumeTrue(connectionsToCycle() > 0, transportName()
                + " sets no room for lanes to run out of here (connectionsToCycle)");
        for (int i = 0; i < connectionsToCycle(); i++) {
            List<LaneConnection> lanes;
            try {
                lanes = workers.connect(WAIT);
            } catch (java.util.concurrent.ExecutionException e) {
                throw new AssertionError("connect " + (i + 1) + " of " + connectionsToCycle() + ", each closed before"
                        + " the next, failed: " + e.getCause(), e);
            }
            lanes.forEach(LaneConnection::close);
        }
    }

    // ------------------------------------------------------------------ the harness

    private ContractLane connect() {
        List<LaneConnection> lanes;
        try {
            lanes = workers.connect(WAIT);
        } catch (Exception e) {
            throw new AssertionError("connecting to the target failed: " + e, e);
        }
        opened.addAll(lanes);
        assertTrue(lanes.size() > laneIndex(), "the connect gave " + lanes.size() + " lane(s), the suite checks"
                + " lane " + laneIndex());
        return new ContractLane(lanes.get(laneIndex()), workers.memory, workers.key, originId, () -> ++sequence);
    }
}
