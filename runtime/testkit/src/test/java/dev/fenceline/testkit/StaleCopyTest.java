package dev.fenceline.testkit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.typesafe.config.ConfigFactory;
import dev.fenceline.ActiveMessageException;
import dev.fenceline.AtomicOp;
import dev.fenceline.Endpoint;
import dev.fenceline.EndpointFailedException;
import dev.fenceline.MemoryRegion;
import dev.fenceline.OutcomeUnknownException;
import dev.fenceline.RemoteKey;
import dev.fenceline.Worker;
import dev.fenceline.testkit.history.History;
import dev.fenceline.testkit.history.HistoryChecker;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicIntegerArray;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * A target that stalls (a paused process) past the keepalive timeout while puts, atomics and
 * active messages are outstanding on its lane; the endpoint gives the lane up, fences and writes
 * again; then the target resumes and takes whatever waited for it. Nothing stale may be applied,
 * nothing twice, and every outcome must tell the truth: on lanes that let the origin withdraw what
 * waits (shm's way), lanes whose late copies the target's exactly-once window recognizes (tcp's),
 * lanes with neither, and when the stalled lane was the last. Deterministic, on virtual time.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class StaleCopyTest {
    private static final int PUTS = 4;
    private static final int COUNTER = 1024;
    private static final int MESSAGE = 9;

    /** Lane 0 carries RMA, atomics and messages; lane 1 only messages (and emulates the rest after a failover). */
    private static String lanes(String lane0, String lane1) {
        return "fenceline.transport.sim.direct-access = off\nfenceline.transport.sim.lanes = ["
                + "{ types = [RMA, AMO, AM], min-delay = 0us, max-delay = 20us" + lane0 + " }"
                + (lane1 == null ? "" : ", { types = [AM], min-delay = 0us, max-delay = 20us" + lane1 + " }") + " ]";
    }

    /** What one run left behind. */
    private record Run(History history, List<CompletableFuture<?>> before, List<CompletableFuture<?>> after,
            long firstWord, long counter, AtomicIntegerArray handled, Endpoint ep) {
    }

    private static Run run(long seed, String hocon) {
        try (DeterministicSimulation sim = DeterministicSimulation.start(seed, ConfigFactory.parseString(hocon))) {
            Worker a = sim.await(sim.fenceline().newWorker("origin"));
            Worker b = sim.await(sim.fenceline().newWorker("target"));
            MemoryRegion region = b.allocate(4096);
            AtomicIntegerArray handled = new AtomicIntegerArray(8);
            b.setActiveMessageHandler(MESSAGE, (h, p) -> handled.incrementAndGet(h.get(0)));
            Endpoint raw = sim.await(a.connect(b.address()));
            History history = new History();
            Endpoint ep = history.record(raw);
            RemoteKey key = a.unpackRemoteKey(region.remoteKey().toBytes());
            long base = region.address();
            List<CompletableFuture<?>> before = new ArrayList<>();
            for (int i = 0; i < PUTS; i++) {
                before.add(ep.put(word(1), base + 8L * i, key).toCompletableFuture());
            }
            for (int i = 0; i < 3; i++) {
                before.add(ep.atomicPost64(AtomicOp.ADD, base + COUNTER, key, 1).toCompletableFuture());
            }
            for (int i = 0; i < 2; i++) {
                before.add(ep.atomicFetch64(AtomicOp.ADD, base + COUNTER, key, 1).toCompletableFuture());
            }
            for (int i = 0; i < 4; i++) {
                before.add(ep.sendActiveMessage(MESSAGE, ByteBuffer.wrap(new byte[] {(byte) i}), ByteBuffer.allocate(8))
                        .toCompletableFuture());
            }
            // Before any of it is delivered: the target stops, for longer than keepalive's 1 s + 5 s.
            sim.network().stallLane(raw, 0, Duration.ofSeconds(20));
            ep.fence();
            List<CompletableFuture<?>> after = new ArrayList<>();
            after.add(ep.put(word(2), base, key).toCompletableFuture()); // overwrites the first put
            after.add(ep.atomicFetch64(AtomicOp.ADD, base + COUNTER, key, 100).toCompletableFuture());
            sim.advance(Duration.ofSeconds(10)); // keepalive gives lane 0 up
            assertTrue(!raw.lanes().get(0).live(), "keepalive gave the stalled lane up: " + raw.lanes());
            sim.advance(Duration.ofSeconds(15)); // the target resumes and takes what waited
            for (CompletableFuture<?> f : before) {
                settle(sim, f);
            }
            for (CompletableFuture<?> f : after) {
                settle(sim, f);
            }
            try {
                sim.await(raw.flush());
            } catch (CompletionException ended) {
                assertInstanceOf(EndpointFailedException.class, ended.getCause());
            }
            sim.advance(Duration.ofSeconds(1));
            ByteBuffer m = region.buffer().order(ByteOrder.nativeOrder());
            return new Run(history, before, after, m.getLong(0), m.getLong(COUNTER), handled, raw);
        }
    }

    private static ByteBuffer word(long v) {
        return ByteBuffer.allocate(8).order(ByteOrder.nativeOrder()).putLong(0, v);
    }

    private static void settle(DeterministicSimulation sim, CompletableFuture<?> f) {
        try {
            sim.await(f);
        } catch (CompletionException failed) {
            // checked below, through the history
        }
    }

    private static void check(Run r) {
        HistoryChecker.of(r.history()).assertEveryRequestCompleted().assertFencesHeld().assertFlushesCovered()
                .assertOutcomesTruthful().assertExactlyOnce(address -> r.counter());
        for (int i = 0; i < 4; i++) {
            assertTrue(r.handled().get(i) <= 1, "message " + i + " ran " + r.handled().get(i) + " times");
        }
    }

    private static boolean ok(CompletableFuture<?> f) {
        return f.isDone() && !f.isCompletedExceptionally();
    }

    private static Throwable error(CompletableFuture<?> f) {
        try {
            f.join();
            return null;
        } catch (CompletionException e) {
            return e.getCause();
        }
    }

    @Test
    void copiesTheOriginWithdrawsAreNeverAppliedAndTheFailoverIsInvisible() {
        Run r = run(41, lanes("", ""));
        check(r);
        assertTrue(r.before().stream().allMatch(StaleCopyTest::ok) && r.after().stream().allMatch(StaleCopyTest::ok),
                "everything was sent again on lane 1 and succeeded");
        assertEquals(2, r.firstWord(), "the later, fenced write is what remains");
        assertEquals(105, r.counter(), "every ADD exactly once: 3 + 2 + 100");
        for (int i = 0; i < 4; i++) {
            assertEquals(1, r.handled().get(i), "message " + i + " ran once");
        }
    }

    @Test
    void lateCopiesThatTheTargetsWindowRecognizesAreNotAppliedAgain() {
        Run r = run(42, lanes(", revocable = off", ", revocable = off"));
        check(r);
        assertTrue(r.before().stream().allMatch(StaleCopyTest::ok) && r.after().stream().allMatch(StaleCopyTest::ok),
                "sent again on lane 1, of the same exactly-once scope; the late copies are duplicates");
        assertEquals(2, r.firstWord(), "no stale put overwrote the fenced one when the target resumed");
        assertEquals(105, r.counter());
        for (int i = 0; i < 4; i++) {
            assertEquals(1, r.handled().get(i), "message " + i + " ran once");
        }
    }

    @Test
    void lateCopiesNothingCanRecognizeEndTheEndpointBeforeAnythingFencedAfterThem() {
        // Strong fences: the writes after the fence wait for lane 0's flush, so they never go out.
        Run r = run(43, lanes(", protocol = hw, revocable = off", ", protocol = hw") + "\nfenceline.fence.mode = strong");
        check(r);
        for (CompletableFuture<?> f : r.after()) {
            assertInstanceOf(EndpointFailedException.class, error(f), "fenced behind a copy that may land late: never"
                    + " sent");
        }
        for (CompletableFuture<?> f : r.before()) {
            assertTrue(ok(f) || error(f) instanceof OutcomeUnknownException, "may still apply: unknown, " + error(f));
        }
        assertEquals(1, r.firstWord(), "the first put landed when the target resumed; the fenced write never went");
        assertEquals(5, r.counter(), "the ADDs that waited applied once each; the fenced ADD never went");
    }

    @Test
    void behindAWeakFenceLaterWorkWaitsInTheSameLaneAndLandsAfter() {
        // Endpoint fences: the writes after the fence follow the earlier ones on lane 0, in its order.
        Run r = run(46, lanes(", protocol = hw, revocable = off", ", protocol = hw"));
        check(r);
        for (CompletableFuture<?> f : r.before()) {
            assertTrue(ok(f) || error(f) instanceof OutcomeUnknownException, "may still apply: unknown, " + error(f));
        }
        for (CompletableFuture<?> f : r.after()) {
            assertInstanceOf(OutcomeUnknownException.class, error(f), "in the stalled inbox behind the others");
        }
        assertEquals(2, r.firstWord(), "the fenced write landed after the first when the target resumed");
        assertEquals(105, r.counter(), "every ADD that waited applied once, in order");
    }

    @Test
    void whenTheStalledLaneWasTheLastWithdrawnCopiesFailAsNotApplied() {
        Run r = run(44, lanes("", null));
        check(r);
        for (CompletableFuture<?> f : r.before()) {
            assertInstanceOf(EndpointFailedException.class, error(f), "withdrawn: truly not applied");
        }
        assertEquals(0, r.firstWord(), "nothing applied when the target resumed");
        assertEquals(0, r.counter());
        for (int i = 0; i < 4; i++) {
            assertEquals(0, r.handled().get(i));
        }
    }

    @Test
    void whenTheStalledLaneWasTheLastLateCopiesAreUnknownAndApplyOnce() {
        Run r = run(45, lanes(", revocable = off", null));
        check(r);
        for (CompletableFuture<?> f : r.before()) {
            assertInstanceOf(OutcomeUnknownException.class, error(f), "in the stalled target's inbox: may still apply");
        }
        for (CompletableFuture<?> f : r.after()) {
            assertInstanceOf(OutcomeUnknownException.class, error(f), "behind the others in the same inbox");
        }
        assertEquals(2, r.firstWord(), "the target took the inbox in order when it resumed");
        assertEquals(105, r.counter(), "each ADD that waited applied once");
        for (int i = 0; i < 4; i++) {
            assertEquals(1, r.handled().get(i), "message " + i + " ran once, late");
        }
    }

    @Test
    void aHandlerThatThrowsRunsOnceEvenWhenItsAnswerIsLostWithTheLane() {
        // Deliveries and answers take 10 to 20 us each: at 21 us the message ran and its answer is on its way.
        String lanes = "fenceline.transport.sim.direct-access = off\nfenceline.transport.sim.lanes = ["
                + "{ types = [AM], min-delay = 10us, max-delay = 20us },"
                + "{ types = [AM], min-delay = 10us, max-delay = 20us } ]";
        try (DeterministicSimulation sim = DeterministicSimulation.start(47, ConfigFactory.parseString(lanes))) {
            Worker a = sim.await(sim.fenceline().newWorker("origin"));
            Worker b = sim.await(sim.fenceline().newWorker("target"));
            AtomicInteger runs = new AtomicInteger();
            b.setActiveMessageHandler(MESSAGE, (h, p) -> {
                runs.incrementAndGet();
                throw new IllegalStateException("refused by the handler");
            });
            Endpoint ep = sim.await(a.connect(b.address()));
            CompletableFuture<Void> m = ep.sendActiveMessage(MESSAGE, ByteBuffer.allocate(1), ByteBuffer.allocate(0))
                    .toCompletableFuture();
            sim.advance(Duration.ofNanos(21_000));
            int lane = ep.statistics().lanes().get(0).operations() > 0 ? 0 : 1;
            assertEquals(1, runs.get(), "it ran");
            assertTrue(!m.isDone(), "its answer is still on its way");
            sim.network().failLane(ep, lane); // its answer is lost with the lane
            CompletionException e = assertThrows(CompletionException.class,
                    () -> sim.await(m));
            assertInstanceOf(ActiveMessageException.class, e.getCause(),
                    "the first run's refusal, from the target's window, not a second run");
            assertEquals(1, runs.get(), "the handler ran once");
            assertEquals(1, ep.statistics().restarts(), "sent again on the other lane");
            assertTrue(ep.lanes().get(1 - lane).live() && !ep.lanes().get(lane).live(), ep.lanes().toString());
        }
    }
}
