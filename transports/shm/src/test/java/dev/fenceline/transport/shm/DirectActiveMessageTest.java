package dev.fenceline.transport.shm;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import com.typesafe.config.ConfigFactory;
import dev.fenceline.ActiveMessageException;
import dev.fenceline.Endpoint;
import dev.fenceline.Fenceline;
import dev.fenceline.MemoryRegion;
import dev.fenceline.RemoteKey;
import dev.fenceline.Worker;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.SplittableRandom;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Implicit active messages on shm: the calling thread writes them into the peer's inbox itself
 * while the endpoint's grant holds, and the lane, not the actor, takes their answers. Whatever path
 * a message takes, the handler sees every one exactly once and in send order, a flush completes
 * only after the handler ran for everything sent before it, and a handler's failure fails the next
 * flush and only that one. The seed is printed.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class DirectActiveMessageTest {
    private static final int ORDERED = 1;
    private static final int THROWS = 2;
    private static final int ECHO = 3;
    private static final int CHECK = 4;
    private static final int PROBE = 5;

    private Fenceline f;
    private Worker a;
    private Worker b;
    private Endpoint ep;

    @BeforeEach
    void start() throws Exception {
        f = Fenceline.create(ConfigFactory.parseString("fenceline.transports = [shm]"));
        a = f.newWorker("a").toCompletableFuture().get(10, TimeUnit.SECONDS);
        b = f.newWorker("b").toCompletableFuture().get(10, TimeUnit.SECONDS);
        ep = a.connect(b.address()).toCompletableFuture().get(10, TimeUnit.SECONDS);
        b.setActiveMessageHandler(PROBE, (h, p) -> { });
    }

    @AfterEach
    void stop() {
        f.close();
    }

    private static ByteBuffer number(long n) {
        return ByteBuffer.allocate(8).order(ByteOrder.nativeOrder()).putLong(0, n);
    }

    private void flush(Endpoint e) throws Exception {
        e.flush().toCompletableFuture().get(10, TimeUnit.SECONDS);
    }

    /**
     * Sends implicit messages (and flushes) until one goes directly: the actor publishes the grant
     * once the endpoint is idle, a moment after the last slow operation completed.
     */
    private void untilDirect() throws Exception {
        untilDirect(a, ep);
    }

    /** The same for endpoint {@code e} of worker {@code w}; its peer must handle PROBE. */
    private static void untilDirect(Worker w, Endpoint e) throws Exception {
        long direct = w.statistics().direct();
        int sent = 0;
        while (w.statistics().direct() == direct) {
            assertTrue(sent < 1000, "no grant after " + sent + " messages: " + w.statistics());
            e.sendActiveMessageImplicit(PROBE, null, null);
            e.flush().toCompletableFuture().get(10, TimeUnit.SECONDS);
            sent++;
        }
    }

    /** Worker y's ORDERED handler hangs until {@code release} (at most 20 s), then counts. */
    private static void hangingPeer(Worker y, java.util.concurrent.CountDownLatch release, AtomicLong handled) {
        y.setActiveMessageHandler(PROBE, (h, p) -> { });
        y.setActiveMessageHandler(ORDERED, (h, p) -> {
            try {
                release.await(20, TimeUnit.SECONDS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
            handled.incrementAndGet();
        });
    }

    @Test
    void everyMessageArrivesOnceInOrderAndAFlushWaitsForItsHandlers() throws Exception {
        long seed = Long.getLong("fenceline.test.seed", 20261129L);
        System.out.println("DirectActiveMessageTest seed " + seed);
        MemoryRegion region = b.allocate(4096);
        RemoteKey key = a.unpackRemoteKey(region.remoteKey().toBytes());
        AtomicLong next = new AtomicLong(); // the number the handler expects next
        AtomicReference<String> disorder = new AtomicReference<>();
        b.setActiveMessageHandler(ORDERED, (h, p) -> {
            long n = p.order(ByteOrder.nativeOrder()).getLong(0);
            if (n != next.get() && disorder.get() == null) {
                disorder.set("expected message " + next.get() + ", got " + n);
            }
            next.set(n + 1);
            if (n % 97 == 0) { // now and then a slow handler: a flush must wait for it
                long until = System.nanoTime() + 200_000;
                while (System.nanoTime() < until) {
                    Thread.onSpinWait();
                }
            }
        });
        flush(ep);
        SplittableRandom rnd = new SplittableRandom(seed);
        long sent = 0;
        CompletableFuture<Void> last = CompletableFuture.completedFuture(null);
        for (int round = 0; round < 400; round++) {
            int burst = 1 + rnd.nextInt(64);
            for (int i = 0; i < burst; i++) {
                int path = rnd.nextInt(20);
                if (path == 0) { // now and then the actor's way, with a completion of its own
                    last = ep.sendActiveMessage(ORDERED, null, number(sent++)).toCompletableFuture();
                } else if (path == 1) { // a put between messages: they stay in order around it
                    ep.putImplicit(number(round), region.address(), key);
                } else {
                    ep.sendActiveMessageImplicit(ORDERED, null, number(sent++));
                }
            }
            flush(ep);
            assertEquals(sent, next.get(), "round " + round + ": the flush completed before the handler ran for"
                    + " every message sent before it (seed " + seed + ")");
        }
        last.get(10, TimeUnit.SECONDS);
        assertEquals(null, disorder.get(), "seed " + seed);

        // Nothing but implicit messages and flushes: once the grant is there, every one is written
        // by this thread, and the flushes wait for their answers without the actor.
        untilDirect();
        long directBefore = a.statistics().direct();
        for (int i = 0; i < 1000; i++) {
            ep.sendActiveMessageImplicit(ORDERED, null, number(sent++));
            if (i % 100 == 99) {
                flush(ep);
                assertEquals(sent, next.get(), "a direct flush completed before the handlers ran");
            }
        }
        assertEquals(null, disorder.get(), "seed " + seed);
        assertEquals(1000, a.statistics().direct() - directBefore, a.statistics().toString());
    }

    @Test
    void aHandlersFailureFailsTheNextFlushOnly() throws Exception {
        AtomicLong handled = new AtomicLong();
        b.setActiveMessageHandler(THROWS, (h, p) -> {
            handled.incrementAndGet();
            if (p.order(ByteOrder.nativeOrder()).getLong(0) == 13) {
                throw new IllegalStateException("thirteen");
            }
        });
        for (int round = 0; round < 3; round++) {
            untilDirect();
            long directBefore = a.statistics().direct();
            for (long i = 0; i < 20; i++) {
                ep.sendActiveMessageImplicit(THROWS, null, number(i));
            }
            assertEquals(20, a.statistics().direct() - directBefore, "all went directly");
            try {
                flush(ep);
                fail("the handler threw for message 13 of round " + round + ", but the flush succeeded");
            } catch (ExecutionException e) {
                assertInstanceOf(ActiveMessageException.class, e.getCause(), e.getCause().toString());
                assertTrue(e.getCause().getMessage().contains("thirteen"), e.getCause().getMessage());
            }
            assertEquals(20L * (round + 1), handled.get(), "every message ran, the failed one too");
            flush(ep); // reported once: the next flush is clean
        }
    }

    @Test
    void aHandlerMayPassOnTheBuffersItWasGiven() throws Exception {
        // b echoes every message back to a with the very buffers its handler got; a checks each byte.
        Endpoint back = b.connect(a.address()).toCompletableFuture().get(10, TimeUnit.SECONDS);
        b.setActiveMessageHandler(ECHO, (h, p) -> back.sendActiveMessageImplicit(CHECK, h, p));
        AtomicLong checked = new AtomicLong();
        AtomicReference<String> wrong = new AtomicReference<>();
        a.setActiveMessageHandler(CHECK, (h, p) -> {
            long n = h.order(ByteOrder.nativeOrder()).getLong(0);
            int size = p.remaining();
            if (size != (int) (n % 4096) + 1) {
                wrong.compareAndSet(null, "message " + n + " has " + size + " bytes");
            }
            for (int i = 0; i < size; i++) {
                if (p.get(p.position() + i) != (byte) (n + i)) {
                    wrong.compareAndSet(null, "message " + n + " byte " + i);
                    break;
                }
            }
            checked.incrementAndGet();
        });
        flush(ep);
        int messages = 5000;
        for (long n = 0; n < messages; n++) {
            int size = (int) (n % 4096) + 1;
            ByteBuffer p = ByteBuffer.allocateDirect(size);
            for (int i = 0; i < size; i++) {
                p.put(i, (byte) (n + i));
            }
            ep.sendActiveMessageImplicit(ECHO, number(n), p);
            p.put(0, (byte) ~p.get(0)); // the caller may reuse its buffer at once: it was copied
        }
        flush(ep); // every ECHO handler ran, so every echo was sent...
        flush(back); // ...and every echo was handled
        assertEquals(null, wrong.get());
        assertEquals(messages, checked.get());
    }

    @Test
    void closingWaitsForTheHandlersOfEveryMessageSentBeforeIt() throws Exception {
        AtomicLong handled = new AtomicLong();
        b.setActiveMessageHandler(ORDERED, (h, p) -> {
            long until = System.nanoTime() + 100_000;
            while (System.nanoTime() < until) {
                Thread.onSpinWait();
            }
            handled.incrementAndGet();
        });
        untilDirect();
        long directBefore = a.statistics().direct();
        for (int i = 0; i < 300; i++) {
            ep.sendActiveMessageImplicit(ORDERED, null, number(i));
        }
        assertEquals(300, a.statistics().direct() - directBefore, a.statistics().toString());
        // Closed while most are still in the peer's inbox: the close flushes first, and that flush
        // waits for their answers.
        ep.close().toCompletableFuture().get(10, TimeUnit.SECONDS);
        assertEquals(300, handled.get(), "the close completed before the handler ran for every message");
        // The worker goes on: a new endpoint to the same peer works on both paths.
        Endpoint again = a.connect(b.address()).toCompletableFuture().get(10, TimeUnit.SECONDS);
        again.sendActiveMessage(ORDERED, null, null).toCompletableFuture().get(10, TimeUnit.SECONDS);
        again.sendActiveMessageImplicit(ORDERED, null, null);
        flush(again);
        assertEquals(302, handled.get());
    }

    @Test
    void concurrentSendersEachFindTheirOwnMessagesHandledAtTheirFlush() throws Exception {
        long seed = Long.getLong("fenceline.test.seed", 20261129L);
        System.out.println("DirectActiveMessageTest concurrent seed " + seed);
        int threads = 4;
        int rounds = 300;
        // Per sender: the last number its handler saw, and whether one came out of order.
        AtomicLong[] seen = new AtomicLong[threads];
        AtomicReference<String> wrong = new AtomicReference<>();
        for (int t = 0; t < threads; t++) {
            seen[t] = new AtomicLong(-1);
        }
        b.setActiveMessageHandler(ORDERED, (h, p) -> {
            p.order(ByteOrder.nativeOrder());
            int t = (int) p.getLong(0);
            long n = p.getLong(8);
            if (seen[t].get() != n - 1) {
                wrong.compareAndSet(null, "sender " + t + ": message " + n + " after " + seen[t].get());
            }
            seen[t].set(n);
        });
        untilDirect();
        long directBefore = a.statistics().direct();
        java.util.List<Thread> senders = new java.util.ArrayList<>();
        java.util.List<Throwable> errors = new java.util.concurrent.CopyOnWriteArrayList<>();
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
                            if (rnd.nextInt(50) == 0) { // now and then the actor's way
                                ep.sendActiveMessage(ORDERED, null, p).toCompletableFuture().get(10, TimeUnit.SECONDS);
                            } else {
                                ep.sendActiveMessageImplicit(ORDERED, null, p);
                            }
                        }
                        flush(ep);
                        // A flush covers what this thread sent before it, whatever the others do.
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
            th.join(TimeUnit.SECONDS.toMillis(50));
            assertTrue(!th.isAlive(), th.getName() + " is stuck (seed " + seed + ")");
        }
        assertEquals(java.util.List.of(), errors, "seed " + seed);
        assertEquals(null, wrong.get(), "seed " + seed);
        assertTrue(a.statistics().direct() > directBefore, a.statistics().toString());
    }

    @Test
    void aBlockedHandlerIsLoggedWithItsStackAndFailsNoLane() throws Exception {
        ch.qos.logback.classic.Logger watchdog = (ch.qos.logback.classic.Logger) org.slf4j.LoggerFactory.getLogger(
                "dev.fenceline.internal.SlowHandlers");
        ch.qos.logback.core.read.ListAppender<ch.qos.logback.classic.spi.ILoggingEvent> logged =
                new ch.qos.logback.core.read.ListAppender<>();
        logged.start();
        watchdog.addAppender(logged);
        try (Fenceline g = Fenceline.create(ConfigFactory.parseString("""
                fenceline.transports = [shm]
                fenceline.endpoint.keepalive { interval = 100ms, timeout = 500ms }
                fenceline.active-message.handler-time-bound = 100ms
                """))) {
            Worker x = g.newWorker("x").toCompletableFuture().get(10, TimeUnit.SECONDS);
            Worker y = g.newWorker("y").toCompletableFuture().get(10, TimeUnit.SECONDS);
            Worker z = g.newWorker("z").toCompletableFuture().get(10, TimeUnit.SECONDS);
            Endpoint toY = x.connect(y.address()).toCompletableFuture().get(10, TimeUnit.SECONDS);
            Endpoint zToY = z.connect(y.address()).toCompletableFuture().get(10, TimeUnit.SECONDS);
            java.util.concurrent.CountDownLatch release = new java.util.concurrent.CountDownLatch(1);
            AtomicLong handled = new AtomicLong();
            // A handler that hangs holds y's polling thread: y's inbox serves no one meanwhile.
            hangingPeer(y, release, handled);
            try {
                untilDirect(x, toY);
                for (int i = 0; i < 10; i++) {
                    toY.sendActiveMessageImplicit(ORDERED, null, number(i));
                }
                CompletableFuture<Void> waiting = toY.flush().toCompletableFuture();
                Thread.sleep(2000); // keepalive's interval and timeout, over and over
                assertTrue(!waiting.isDone(), "the flush waits for the handlers");
                assertTrue(toY.lanes().stream().allMatch(dev.fenceline.LaneInfo::live), "slow is not dead: "
                        + toY.lanes());
                assertTrue(zToY.lanes().stream().allMatch(dev.fenceline.LaneInfo::live), "another endpoint's lanes"
                        + " keep their keepalive: " + zToY.lanes());
                release.countDown();
                waiting.get(20, TimeUnit.SECONDS);
                assertEquals(10, handled.get(), "every message ran once the handler let go");
            } finally {
                release.countDown();
            }
            List<ch.qos.logback.classic.spi.ILoggingEvent> warnings = logged.list.stream()
                    .filter(e -> e.getFormattedMessage().contains("has run")).toList();
            assertEquals(1, warnings.size(), "logged once while it ran: " + logged.list);
            assertTrue(warnings.get(0).getThrowableProxy() != null && java.util.Arrays.stream(
                    warnings.get(0).getThrowableProxy().getStackTraceElementProxyArray())
                    .anyMatch(f -> f.getSTEAsString().contains("CountDownLatch.await")), "with the stack it is stuck in");
        } finally {
            watchdog.detachAppender(logged);
        }
    }

    @Test
    void aMessageTheLaneRefusesNeverReleasesAnEarlierFlush() throws Exception {
        // One unanswered ring message per lane: the second message is refused by the lane and takes
        // the actor's path. The flush taken between them waits for the first one's handler.
        try (Fenceline g = Fenceline.create(ConfigFactory.parseString("""
                fenceline.transports = [shm]
                fenceline.transport.shm.queue-depth = 1
                """))) {
            Worker x = g.newWorker("x").toCompletableFuture().get(10, TimeUnit.SECONDS);
            Worker y = g.newWorker("y").toCompletableFuture().get(10, TimeUnit.SECONDS);
            Endpoint toY = x.connect(y.address()).toCompletableFuture().get(10, TimeUnit.SECONDS);
            java.util.concurrent.CountDownLatch release = new java.util.concurrent.CountDownLatch(1);
            AtomicLong handled = new AtomicLong();
            hangingPeer(y, release, handled);
            try {
                untilDirect(x, toY);
                long before = x.statistics().direct();
                toY.sendActiveMessageImplicit(ORDERED, null, number(0));
                assertEquals(1, x.statistics().direct() - before, "the first went directly");
                CompletableFuture<Void> f = toY.flush().toCompletableFuture();
                toY.sendActiveMessageImplicit(ORDERED, null, number(1)); // refused by the lane: no room
                assertEquals(1, x.statistics().direct() - before, "the second took the actor's path");
                Thread.sleep(200);
                assertTrue(!f.isDone(), "the flush completed before the handler ran for the message before it");
                release.countDown();
                f.get(10, TimeUnit.SECONDS);
                assertTrue(handled.get() >= 1);
                toY.flush().toCompletableFuture().get(10, TimeUnit.SECONDS);
                assertEquals(2, handled.get());
            } finally {
                release.countDown();
            }
        }
    }
}
