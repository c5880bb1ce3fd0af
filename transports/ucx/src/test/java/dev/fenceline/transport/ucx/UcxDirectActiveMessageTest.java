package dev.fenceline.transport.ucx;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import com.typesafe.config.ConfigFactory;
import dev.fenceline.ActiveMessageException;
import dev.fenceline.Endpoint;
import dev.fenceline.EndpointFailedException;
import dev.fenceline.Fenceline;
import dev.fenceline.OutcomeUnknownException;
import dev.fenceline.Worker;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Implicit active messages over UCT while the endpoint's grant holds: the calling thread numbers each
 * message and queues it for the agent itself, and the agent reports its answer to the endpoint's
 * ledger without the endpoint actor. Whatever path a message takes, the handler sees each once and
 * in send order, a flush completes only after the handler ran for everything sent before it, a
 * handler's failure fails the next flush only, and a lane that breaks with messages unanswered makes
 * the next flush say their outcome is unknown (not that they failed: they left). Over UCT's shared
 * memory and its tcp; seeds printed.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class UcxDirectActiveMessageTest {
    private static final int ORDERED = 1;
    private static final int THROWS = 2;
    private static final int PROBE = 5;

    @BeforeAll
    static void ucx() {
        UcxAssumptions.ucxAvailable();
    }

    private static <T> T await(java.util.concurrent.CompletionStage<T> s) throws Exception {
        return s.toCompletableFuture().get(20, TimeUnit.SECONDS);
    }

    private static Fenceline fenceline(String tls) {
        return fenceline(tls, "");
    }

    /** @param more further settings (HOCON) */
    private static Fenceline fenceline(String tls, String more) {
        return Fenceline.create(ConfigFactory.parseString("fenceline.transports = [ucx]\n"
                + "fenceline.transport.ucx.tls = [" + tls + "]\n"
                + (tls.equals("tcp") ? "fenceline.transport.ucx.devices = [lo]\nfenceline.transport.ucx.tcp-unchecked-writes = accept\n" : "") + more));
    }

    /** @return the seed ({@code -Dfenceline.test.seed}, else fixed), printed with the test's name */
    private static long seed(String test, String tls) {
        long seed = Long.getLong("fenceline.test.seed", 20261202L);
        System.out.println("UcxDirectActiveMessageTest " + test + " " + tls + " seed " + seed);
        return seed;
    }

    private static ByteBuffer number(long n) {
        return ByteBuffer.allocate(8).order(ByteOrder.nativeOrder()).putLong(0, n);
    }

    /**
     * Two workers with an endpoint each way, both taking probes ({@link #untilDirect}).
     *
     * @param a a worker
     * @param b another
     * @param ab a's endpoint to b
     * @param ba b's endpoint to a
     */
    private record TwoWay(Worker a, Worker b, Endpoint ab, Endpoint ba) {
        static TwoWay start(Fenceline f) throws Exception {
            Worker a = await(f.newWorker("a"));
            Worker b = await(f.newWorker("b"));
            a.setActiveMessageHandler(PROBE, (h, p) -> { });
            b.setActiveMessageHandler(PROBE, (h, p) -> { });
            return new TwoWay(a, b, await(a.connect(b.address())), await(b.connect(a.address())));
        }
    }

    /** Implicit probes and flushes until one goes directly: the grant comes once the endpoint is idle. */
    private static void untilDirect(Worker w, Endpoint e) throws Exception {
        long direct = w.statistics().direct();
        int sent = 0;
        while (w.statistics().direct() == direct) {
            assertTrue(sent < 1000, "no grant after " + sent + " messages: " + w.statistics());
            e.sendActiveMessageImplicit(PROBE, null, null);
            await(e.flush());
            sent++;
        }
    }

    @ParameterizedTest(name = "over UCT {0}")
    @ValueSource(strings = {"posix", "tcp"})
    void everyMessageArrivesOnceInOrderAndAFlushWaitsForItsHandlers(String tls) throws Exception {
        long seed = seed("ordered", tls);
        try (Fenceline f = fenceline(tls)) {
            Worker a = await(f.newWorker("a"));
            Worker b = await(f.newWorker("b"));
            Endpoint ep = await(a.connect(b.address()));
            b.setActiveMessageHandler(PROBE, (h, p) -> { });
            AtomicLong next = new AtomicLong();
            AtomicReference<String> disorder = new AtomicReference<>();
            b.setActiveMessageHandler(ORDERED, (h, p) -> {
                long n = p.order(ByteOrder.nativeOrder()).getLong(0);
                if (n != next.get()) {
                    disorder.compareAndSet(null, "expected message " + next.get() + ", got " + n);
                }
                next.set(n + 1);
            });
            SplittableRandom rnd = new SplittableRandom(seed);
            long sent = 0;
            CompletableFuture<Void> last = CompletableFuture.completedFuture(null);
            for (int round = 0; round < 200; round++) {
                int burst = 1 + rnd.nextInt(64);
                for (int i = 0; i < burst; i++) {
                    if (rnd.nextInt(20) == 0) { // now and then the actor's way, with a completion of its own
                        last = ep.sendActiveMessage(ORDERED, null, number(sent++)).toCompletableFuture();
                    } else {
                        ep.sendActiveMessageImplicit(ORDERED, null, number(sent++));
                    }
                }
                await(ep.flush());
                assertEquals(sent, next.get(), "round " + round + ": the flush completed before the handler ran"
                        + " for every message sent before it (seed " + seed + ")");
            }
            await(last);
            assertEquals(null, disorder.get(), "seed " + seed);

            untilDirect(a, ep);
            long before = a.statistics().direct();
            for (int i = 0; i < 1000; i++) {
                ep.sendActiveMessageImplicit(ORDERED, null, number(sent++));
                if (i % 100 == 99) {
                    await(ep.flush());
                    assertEquals(sent, next.get(), "a flush completed before the handlers ran");
                }
            }
            assertEquals(null, disorder.get(), "seed " + seed);
            long direct = a.statistics().direct() - before;
            assertTrue(direct >= 900, "went directly: " + direct + " of 1,000 (" + a.statistics() + ")");
        }
    }

    @ParameterizedTest(name = "over UCT {0}")
    @ValueSource(strings = {"posix", "tcp"})
    void aHandlersFailureFailsTheNextFlushOnly(String tls) throws Exception {
        try (Fenceline f = fenceline(tls)) {
            Worker a = await(f.newWorker("a"));
            Worker b = await(f.newWorker("b"));
            Endpoint ep = await(a.connect(b.address()));
            b.setActiveMessageHandler(PROBE, (h, p) -> { });
            AtomicLong handled = new AtomicLong();
            b.setActiveMessageHandler(THROWS, (h, p) -> {
                handled.incrementAndGet();
                if (p.order(ByteOrder.nativeOrder()).getLong(0) == 13) {
                    throw new IllegalStateException("thirteen");
                }
            });
            for (int round = 0; round < 3; round++) {
                untilDirect(a, ep);
                long before = a.statistics().direct();
                for (long i = 0; i < 20; i++) {
                    ep.sendActiveMessageImplicit(THROWS, null, number(i));
                }
                assertTrue(a.statistics().direct() - before > 0, "some went directly: " + a.statistics());
                try {
                    await(ep.flush());
                    fail("the handler threw for message 13 of round " + round + ", but the flush succeeded");
                } catch (ExecutionException e) {
                    assertInstanceOf(ActiveMessageException.class, e.getCause(), e.getCause().toString());
                    assertTrue(e.getCause().getMessage().contains("thirteen"), e.getCause().getMessage());
                }
                assertEquals(20L * (round + 1), handled.get(), "every message ran, the failed one too");
                await(ep.flush()); // reported once: the next flush is clean
            }
        }
    }

    @ParameterizedTest(name = "over UCT {0}")
    @ValueSource(strings = {"posix", "tcp"})
    void concurrentSendersEachFindTheirOwnMessagesHandledAtTheirFlush(String tls) throws Exception {
        long seed = seed("concurrent", tls);
        int threads = 4;
        int rounds = 200;
        try (Fenceline f = fenceline(tls)) {
            Worker a = await(f.newWorker("a"));
            Worker b = await(f.newWorker("b"));
            Endpoint ep = await(a.connect(b.address()));
            b.setActiveMessageHandler(PROBE, (h, p) -> { });
            AtomicLong[] seen = new AtomicLong[threads];
            for (int t = 0; t < threads; t++) {
                seen[t] = new AtomicLong(-1);
            }
            AtomicReference<String> wrong = new AtomicReference<>();
            b.setActiveMessageHandler(ORDERED, (h, p) -> {
                p.order(ByteOrder.nativeOrder());
                int t = (int) p.getLong(0);
                long n = p.getLong(8);
                if (seen[t].get() != n - 1) {
                    wrong.compareAndSet(null, "sender " + t + ": message " + n + " after " + seen[t].get());
                }
                seen[t].set(n);
            });
            untilDirect(a, ep);
            long before = a.statistics().direct();
            List<Thread> senders = new ArrayList<>();
            List<Throwable> errors = new CopyOnWriteArrayList<>();
            for (int t = 0; t < threads; t++) {
                int sender = t;
                SplittableRandom rnd = new SplittableRandom(seed + t);
                senders.add(new Thread(() -> {
                    try {
                        long n = 0;
                        for (int round = 0; round < rounds; round++) {
                            int burst = 1 + rnd.nextInt(40);
                            for (int i = 0; i < burst; i++) {
                                ByteBuffer p = ByteBuffer.allocate(16).order(ByteOrder.nativeOrder())
                                        .putLong(0, sender).putLong(8, n++);
                                if (rnd.nextInt(50) == 0) {
                                    await(ep.sendActiveMessage(ORDERED, null, p));
                                } else {
                                    ep.sendActiveMessageImplicit(ORDERED, null, p);
                                }
                            }
                            await(ep.flush());
                            assertEquals(n - 1, seen[sender].get(), "sender " + sender + " round " + round
                                    + " (seed " + seed + ")");
                        }
                    } catch (Throwable e) {
                        errors.add(e);
                    }
                }, "sender-" + t));
            }
            senders.forEach(Thread::start);
            for (Thread th : senders) {
                th.join(TimeUnit.SECONDS.toMillis(90));
                assertTrue(!th.isAlive(), th.getName() + " is stuck (seed " + seed + ")");
            }
            assertEquals(List.of(), errors, "seed " + seed);
            assertEquals(null, wrong.get(), "seed " + seed);
            assertTrue(a.statistics().direct() > before, a.statistics().toString());
        }
    }

    /**
     * A handler that answers each message with one of its own sends it on the agent's thread: at once
     * where nothing is queued ahead of it, through the queue where something is (another thread sends
     * on the same endpoint meanwhile). Both streams arrive once each and in order, and the answering
     * side's flushes report every answer.
     */
    @ParameterizedTest(name = "over UCT {0}")
    @ValueSource(strings = {"posix", "tcp"})
    void aHandlerAnsweringWithAMessageKeepsOrderWithTheEndpointsOtherSenders(String tls) throws Exception {
        long seed = seed("answering", tls);
        int pings = 3000;
        int sides = 3000;
        try (Fenceline f = fenceline(tls)) {
            TwoWay w = TwoWay.start(f);
            Worker a = w.a();
            Worker b = w.b();
            Endpoint ab = w.ab();
            Endpoint ba = w.ba();
            AtomicReference<String> wrong = new AtomicReference<>();
            AtomicLong pongs = new AtomicLong();
            AtomicLong sideSeen = new AtomicLong();
            a.setActiveMessageHandler(ORDERED, (h, p) -> { // pongs
                long n = p.order(ByteOrder.nativeOrder()).getLong(0);
                if (n != pongs.get()) {
                    wrong.compareAndSet(null, "pong " + n + " where " + pongs.get() + " was due");
                }
                pongs.set(n + 1);
            });
            a.setActiveMessageHandler(THROWS, (h, p) -> { // the other sender's stream; it never throws here
                long n = p.order(ByteOrder.nativeOrder()).getLong(0);
                if (n != sideSeen.get()) {
                    wrong.compareAndSet(null, "side message " + n + " where " + sideSeen.get() + " was due");
                }
                sideSeen.set(n + 1);
            });
            b.setActiveMessageHandler(ORDERED, (h, p) -> // the agent's thread answers
                    ba.sendActiveMessageImplicit(ORDERED, null, number(p.order(ByteOrder.nativeOrder()).getLong(0))));
            untilDirect(a, ab);
            untilDirect(b, ba);
            long answeredBefore = b.statistics().direct();
            List<Throwable> errors = new CopyOnWriteArrayList<>();
            Thread side = new Thread(() -> {
                SplittableRandom rnd = new SplittableRandom(seed);
                try {
                    for (int i = 0; i < sides; i++) {
                        ba.sendActiveMessageImplicit(THROWS, null, number(i));
                        if (rnd.nextInt(100) == 0) {
                            await(ba.flush());
                        }
                    }
                } catch (Throwable e) {
                    errors.add(e);
                }
            }, "side-sender");
            side.start();
            SplittableRandom rnd = new SplittableRandom(seed + 1);
            for (int i = 0; i < pings; i++) {
                ab.sendActiveMessageImplicit(ORDERED, null, number(i));
                if (rnd.nextInt(50) == 0) {
                    await(ab.flush());
                }
            }
            await(ab.flush()); // every ping's handler ran, so every pong was sent
            side.join(TimeUnit.SECONDS.toMillis(60));
            assertTrue(!side.isAlive(), "the side sender is stuck (seed " + seed + ")");
            assertEquals(List.of(), errors, "seed " + seed);
            await(ba.flush()); // every pong and side message handled at a, none failed
            assertEquals(null, wrong.get(), "seed " + seed);
            assertEquals(pings, pongs.get(), "seed " + seed);
            assertEquals(sides, sideSeen.get(), "seed " + seed);
            assertTrue(b.statistics().direct() - answeredBefore >= pings, "the answers went directly: "
                    + b.statistics());
        }
    }

    /**
     * A handler may send from buffers it reuses at once (or from the ones it was given, valid only
     * during its call): an implicit message takes its bytes before it returns. On the agent's thread
     * a message that cannot leave at once (UCT's queue to the peer is full: sixteen 2 KiB answers in
     * a row fill a posix FIFO) is the case that must still copy: each ping's handler sends its
     * answers from one buffer it overwrites after every send, and each answer must arrive with its
     * own bytes, in order.
     */
    @ParameterizedTest(name = "over UCT {0}")
    @ValueSource(strings = {"posix", "tcp"})
    void aHandlerReusingItsBufferAtOnceStillSendsWhatItWrote(String tls) throws Exception {
        int pings = 500;
        int answers = 16;
        int size = 2048;
        try (Fenceline f = fenceline(tls)) {
            TwoWay w = TwoWay.start(f);
            Worker a = w.a();
            Worker b = w.b();
            Endpoint ab = w.ab();
            Endpoint ba = w.ba();
            AtomicReference<String> wrong = new AtomicReference<>();
            AtomicLong next = new AtomicLong();
            a.setActiveMessageHandler(ORDERED, (h, p) -> {
                ByteBuffer q = p.order(ByteOrder.nativeOrder());
                long first = q.getLong(0);
                long last = q.getLong(q.limit() - 8);
                if (q.remaining() != size || first != next.get() || last != first) {
                    wrong.compareAndSet(null, "answer " + first + " (ending " + last + ", " + q.remaining()
                            + " bytes) where " + next.get() + " was due");
                }
                next.set(first + 1);
            });
            ByteBuffer scratch = ByteBuffer.allocateDirect(size).order(ByteOrder.nativeOrder()); // the agent's thread only
            b.setActiveMessageHandler(ORDERED, (h, p) -> {
                long n = p.order(ByteOrder.nativeOrder()).getLong(0);
                for (int k = 0; k < answers; k++) {
                    long m = n * answers + k;
                    scratch.putLong(0, m).putLong(size - 8, m);
                    ba.sendActiveMessageImplicit(ORDERED, null, scratch);
                    scratch.putLong(0, -1).putLong(size - 8, -2); // reused at once
                }
            });
            untilDirect(a, ab);
            untilDirect(b, ba);
            long directBefore = b.statistics().direct();
            for (int i = 0; i < pings; i++) {
                ab.sendActiveMessageImplicit(ORDERED, null, number(i));
            }
            await(ab.flush()); // every ping's handler ran, so every answer was sent
            await(ba.flush()); // and every answer was handled at a
            assertEquals(null, wrong.get());
            assertEquals((long) pings * answers, next.get());
            // Most answers go directly, from the agent's thread (the rest, where the lane's queue is
            // full, through the endpoint actor).
            assertTrue(b.statistics().direct() - directBefore >= pings, "the answers went directly: "
                    + b.statistics());
        }
    }

    @ParameterizedTest(name = "over UCT {0}")
    @ValueSource(strings = {"posix", "tcp"})
    void aLaneThatBreaksWithMessagesUnansweredMakesTheNextFlushSayTheirOutcomeIsUnknown(String tls)
            throws Exception {
        try (Fenceline f = fenceline(tls)) {
            Worker a = await(f.newWorker("a"));
            Worker b = await(f.newWorker("b"));
            Endpoint ep = await(a.connect(b.address()));
            b.setActiveMessageHandler(PROBE, (h, p) -> { });
            HeldHandler held = new HeldHandler();
            b.setActiveMessageHandler(ORDERED, held);
            try {
                untilDirect(a, ep);
                long before = a.statistics().direct();
                for (int i = 0; i < 10; i++) {
                    ep.sendActiveMessageImplicit(ORDERED, null, number(i));
                }
                assertTrue(a.statistics().direct() - before > 0, "some went directly: " + a.statistics());
                CompletableFuture<Void> flushed = ep.flush().toCompletableFuture();
                // Broken once the first message is in its handler: at least that one left.
                assertTrue(held.entered.await(20, TimeUnit.SECONDS), "the first message reached its handler");
                UcxLane lane = UcxLane.byId(ep.lanes().get(0).connectionId());
                assertNotNull(lane, "the UCT lane is live: " + ep.lanes());
                lane.breakChannel(new EndpointFailedException("test: UCT reported the peer failed"));
                try {
                    flushed.get(20, TimeUnit.SECONDS);
                    fail("the lane broke with messages whose handlers had not answered, but the flush succeeded");
                } catch (ExecutionException e) {
                    assertInstanceOf(OutcomeUnknownException.class, e.getCause(), e.getCause().toString());
                }
            } finally {
                held.release();
            }
            // Its last lane gone, the endpoint failed; the worker goes on, and a new endpoint to the
            // same peer works on both paths. No message ran twice.
            Endpoint again = await(a.connect(b.address()));
            await(again.sendActiveMessage(PROBE, null, null));
            again.sendActiveMessageImplicit(PROBE, null, null);
            await(again.flush());
            assertTrue(held.handled.get() <= 10, "no message ran twice: " + held.handled.get());
        }
    }

    /**
     * The target holds back the answers to direct messages (here for up to a second); a flush asks
     * for them, and gets them at once instead of at their deadline. Sixteen and more go in one message.
     */
    @ParameterizedTest(name = "over UCT {0}")
    @ValueSource(strings = {"posix", "tcp"})
    void aFlushGetsTheAnswersTheTargetHoldsAtOnce(String tls) throws Exception {
        try (Fenceline f = fenceline(tls, "fenceline.transport.ucx.answer-hold = 1s")) {
            TwoWay t = TwoWay.start(f);
            java.util.concurrent.atomic.AtomicInteger ran = new java.util.concurrent.atomic.AtomicInteger();
            t.b().setActiveMessageHandler(ORDERED, (h, p) -> ran.incrementAndGet());
            untilDirect(t.a(), t.ab());
            for (int n : new int[] {1, 3, 16, 40}) {
                long direct = t.a().statistics().direct();
                int before = ran.get();
                for (int i = 0; i < n; i++) {
                    t.ab().sendActiveMessageImplicit(ORDERED, null, number(i));
                }
                long start = System.nanoTime();
                await(t.ab().flush());
                long ms = (System.nanoTime() - start) / 1_000_000;
                assertEquals(before + n, ran.get(), "every handler ran before the flush completed");
                assertTrue(t.a().statistics().direct() >= direct + n, "sent directly: " + t.a().statistics());
                // Without the flush's request the answers would come at the end of the hold (1 s).
                assertTrue(ms < 500, n + " message(s): the flush took " + ms + " ms");
            }
        }
    }

    /**
     * A put after direct messages whose answers the target holds (for up to a second): whichever way
     * it goes, it waits for those answers, and asks for them rather than wait out the hold.
     */
    @ParameterizedTest(name = "over UCT {0}")
    @ValueSource(strings = {"posix", "tcp"})
    void aPutBehindHeldAnswersAsksForThem(String tls) throws Exception {
        try (Fenceline f = fenceline(tls, "fenceline.transport.ucx.answer-hold = 1s")) {
            TwoWay t = TwoWay.start(f);
            t.b().setActiveMessageHandler(ORDERED, (h, p) -> { });
            dev.fenceline.MemoryRegion r = t.b().allocate(1 << 20);
            dev.fenceline.RemoteKey k = t.a().unpackRemoteKey(r.remoteKey().toBytes());
            await(t.ab().put(ByteBuffer.allocateDirect(64 << 10), r.address(), k));
            untilDirect(t.a(), t.ab());
            for (int size : new int[] {8, 64 << 10}) {
                for (int i = 0; i < 10; i++) {
                    t.ab().sendActiveMessageImplicit(ORDERED, null, number(i));
                }
                long start = System.nanoTime();
                await(t.ab().put(ByteBuffer.allocateDirect(size), r.address(), k));
                long ms = (System.nanoTime() - start) / 1_000_000;
                assertTrue(ms < 500, "a put of " + size + " bytes took " + ms + " ms");
                await(t.ab().flush());
            }
        }
    }
}
