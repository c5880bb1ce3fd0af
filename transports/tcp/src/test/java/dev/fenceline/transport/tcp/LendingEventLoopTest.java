package dev.fenceline.transport.tcp;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.netty.bootstrap.ServerBootstrap;
import io.netty.buffer.ByteBuf;
import io.netty.channel.Channel;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.channel.ChannelInitializer;
import io.netty.util.ReferenceCountUtil;
import io.netty.util.concurrent.DefaultThreadFactory;
import java.net.InetSocketAddress;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.atomic.AtomicReferenceArray;
import java.util.function.BooleanSupplier;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * A lent event loop runs its I/O and tasks on the borrower's thread, inside its polls only, and on
 * its own thread again once given back, taken back from a borrower that died, or shut down; never
 * on two threads at once.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class LendingEventLoopTest {
    private LendingEventLoopGroup group;
    private LendingEventLoop loop;

    /** @return the I/O the loops run: native epoll where available (each subclass: another) */
    NettyIo io() {
        return NettyIo.choose("auto", false);
    }

    @BeforeEach
    void start() {
        NettyIo io = io();
        group = new LendingEventLoopGroup(1, new DefaultThreadFactory("lending-test", true), io.handlers());
        loop = group.loops().get(0);
    }

    @AfterEach
    void stop() throws InterruptedException {
        group.shutdownGracefully(0, 5, TimeUnit.SECONDS);
        assertTrue(group.awaitTermination(10, TimeUnit.SECONDS), "the group terminates");
    }

    /** Polls until {@code done} holds, failing after 10 s. */
    private static void pollUntil(LendingEventLoop.Loan loan, BooleanSupplier done, String what) {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        while (!done.getAsBoolean()) {
            assertTrue(System.nanoTime() - deadline < 0, "not within 10 s: " + what);
            loan.progress();
        }
    }

    /** Waits (the own thread's work) until {@code done} holds, failing after 10 s. */
    private static void awaitOn(BooleanSupplier done, String what) throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        while (!done.getAsBoolean()) {
            assertTrue(System.nanoTime() - deadline < 0, "not within 10 s: " + what);
            Thread.sleep(1);
        }
    }

    /**
     * Waits without blocking, as a borrower must (one that sleeps or joins for 10 ms or more loses
     * the loop), for {@code millis}, or until {@code done} holds if given.
     */
    private static void spin(long millis, BooleanSupplier done) {
        long until = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(millis);
        while (System.nanoTime() - until < 0 && (done == null || !done.getAsBoolean())) {
            Thread.onSpinWait();
        }
    }

    /** @return a server on loopback whose connections, served by the loop, each get {@code handler} */
    private Channel serve(ChannelInboundHandlerAdapter handler) {
        return new ServerBootstrap().group(group).channel(io().serverChannel())
                .childHandler(new ChannelInitializer<Channel>() {
                    @Override
                    protected void initChannel(Channel ch) {
                        ch.pipeline().addLast(handler);
                    }
                }).bind(new InetSocketAddress("127.0.0.1", 0)).syncUninterruptibly().channel();
    }

    private String ownThreadName() throws Exception {
        return loop.submit(() -> Thread.currentThread().getName()).get(10, TimeUnit.SECONDS);
    }

    @Test
    void tasksRunOnTheBorrowerInsideItsPollsOnlyAndOnTheOwnThreadAfter() throws Exception {
        String own = ownThreadName();
        LendingEventLoop.Loan loan = loop.lend(null);
        assertTrue(loop.lent());
        assertFalse(loop.inEventLoop(), "between polls the borrower is not in the loop");
        AtomicReference<String> ranOn = new AtomicReference<>();
        AtomicReference<Boolean> inLoop = new AtomicReference<>();
        Thread other = new Thread(() -> loop.execute(() -> {
            ranOn.set(Thread.currentThread().getName());
            inLoop.set(loop.inEventLoop());
        }));
        other.start();
        spin(10_000, () -> !other.isAlive());
        spin(50, null); // the own thread would have run it by now, were it not lent
        assertEquals(null, ranOn.get(), "nothing runs the lent loop's tasks but the borrower's polls");
        pollUntil(loan, () -> ranOn.get() != null, "the task");
        assertEquals(Thread.currentThread().getName(), ranOn.get());
        assertEquals(Boolean.TRUE, inLoop.get(), "inside a poll the borrower is in the loop");
        loan.close();
        assertFalse(loop.lent());
        assertEquals(0, loan.progress(), "a closed loan polls nothing");
        assertEquals(own, ownThreadName(), "given back, the own thread runs it again");
        loan.close(); // again: nothing
    }

    @Test
    void aChannelsIoIsReadByTheBorrowerWhileLent() throws Exception {
        ConcurrentLinkedQueue<String> readers = new ConcurrentLinkedQueue<>();
        Channel server = serve(new ChannelInboundHandlerAdapter() {
            @Override
            public void channelRead(ChannelHandlerContext ctx, Object msg) {
                readers.add(Thread.currentThread().getName() + ":" + ((ByteBuf) msg).readableBytes());
                ReferenceCountUtil.release(msg);
            }
        });
        try (java.net.Socket client = new java.net.Socket()) {
            client.connect(server.localAddress());
            client.setTcpNoDelay(true);
            client.getOutputStream().write(new byte[3]);
            awaitOn(() -> readers.size() == 1, "the first read");
            String own = ownThreadName();
            assertEquals(own + ":3", readers.poll(), "read by the own thread before the loan");

            LendingEventLoop.Loan loan = loop.lend(null);
            client.getOutputStream().write(new byte[5]);
            spin(50, null);
            assertTrue(readers.isEmpty(), "a lent loop's socket waits for the borrower's poll: " + readers);
            pollUntil(loan, () -> !readers.isEmpty(), "the read");
            assertEquals(Thread.currentThread().getName() + ":5", readers.poll());

            loan.close();
            client.getOutputStream().write(new byte[7]);
            awaitOn(() -> !readers.isEmpty(), "the read after the loan");
            assertEquals(own + ":7", readers.poll());
        } finally {
            server.close().syncUninterruptibly();
        }
    }

    /**
     * A channel's answers to what a borrower's poll read leave with its next poll, or when the loop
     * goes back to its own thread; on the own thread they leave at once.
     */
    @Test
    void writesABorrowersPollFlushesAfterItLeaveWithTheNextPollOrTheLoansEnd() throws Exception {
        AtomicInteger reads = new AtomicInteger();
        Channel server = serve(new ChannelInboundHandlerAdapter() {
            @Override
            public void channelRead(ChannelHandlerContext ctx, Object msg) {
                ctx.write(msg); // echoed, flushed after the read batch
                reads.incrementAndGet();
            }

            @Override
            public void channelReadComplete(ChannelHandlerContext ctx) {
                loop.flushAfterPoll(ctx);
            }
        });
        try (java.net.Socket client = new java.net.Socket()) {
            client.connect(server.localAddress());
            client.setTcpNoDelay(true);
            java.io.InputStream in = client.getInputStream();
            client.getOutputStream().write(1);
            awaitOn(() -> reads.get() == 1, "the own thread's read");
            awaitOn(() -> available(in) == 1, "the own thread's echo, flushed at once");
            assertEquals(1, in.read());

            LendingEventLoop.Loan loan = loop.lend(null);
            client.getOutputStream().write(2);
            pollUntil(loan, () -> reads.get() == 2, "the borrower's read");
            spin(50, null);
            assertEquals(0, available(in), "held while the borrower is between polls");
            // A task queued between polls (the borrower's own frame, say) runs before the held flush:
            // over loopback a flushed echo is in the client's socket when the write returns.
            AtomicInteger seenByTask = new AtomicInteger(-1);
            loop.execute(() -> seenByTask.set(available(in)));
            loan.progress();
            assertEquals(0, seenByTask.get(), "the task ran first, before the held echo left");
            // Spinning, not sleeping: a borrower that sleeps loses the loop, whose own thread would
            // flush the echo too.
            spin(10_000, () -> available(in) == 1);
            assertTrue(loan.open(), "still lent: the next poll sent the echo");
            assertEquals(1, available(in), "the echo, flushed by the next poll");
            assertEquals(2, in.read());

            client.getOutputStream().write(3);
            pollUntil(loan, () -> reads.get() == 3, "the borrower's second read");
            spin(50, null);
            assertEquals(0, available(in), "held again");
            assertTrue(loan.open());
            loan.close();
            awaitOn(() -> available(in) == 1, "the echo, flushed by the own thread once given back");
            assertEquals(3, in.read());
        } finally {
            server.close().syncUninterruptibly();
        }
    }

    private static int available(java.io.InputStream in) {
        try {
            return in.available();
        } catch (java.io.IOException e) {
            throw new java.io.UncheckedIOException(e);
        }
    }

    @Test
    void aSecondBorrowerAndTheOwnThreadAreRefused() throws Exception {
        LendingEventLoop.Loan loan = loop.lend(null);
        try {
            AtomicReference<Throwable> refused = new AtomicReference<>();
            Thread second = new Thread(() -> {
                try {
                    loop.lend(null);
                } catch (Throwable t) {
                    refused.set(t);
                }
            }, "second-borrower");
            second.start();
            spin(10_000, () -> !second.isAlive());
            assertNotNull(refused.get(), "a second borrower is refused");
            assertTrue(refused.get() instanceof IllegalStateException
                    && refused.get().getMessage().contains("lent to " + Thread.currentThread().getName()),
                    String.valueOf(refused.get()));
            Thread stranger = new Thread(() -> {
                try {
                    loan.progress();
                } catch (Throwable t) {
                    refused.set(t);
                }
            }, "stranger");
            refused.set(null);
            stranger.start();
            spin(10_000, () -> !stranger.isAlive());
            assertTrue(refused.get() instanceof IllegalStateException, "only the borrower polls: " + refused.get());
        } finally {
            loan.close();
        }
        Throwable own = loop.submit(() -> assertThrows(IllegalStateException.class, () -> loop.lend(null))).get(10,
                TimeUnit.SECONDS);
        assertTrue(own.getMessage().contains("own thread"), own.getMessage());
    }

    @Test
    void aBorrowerThatEndsWithoutGivingBackLosesTheLoop() throws Exception {
        String own = ownThreadName();
        CountDownLatch lent = new CountDownLatch(1);
        Thread careless = new Thread(() -> {
            loop.lend(null); // and ends without closing it
            lent.countDown();
        }, "careless-borrower");
        careless.start();
        assertTrue(lent.await(10, TimeUnit.SECONDS));
        careless.join();
        awaitOn(() -> !loop.lent(), "the loop taken back");
        assertEquals(own, ownThreadName());
    }

    @Test
    void aLoopShutDownWhileLentTerminatesAndEndsTheLoan() throws Exception {
        LendingEventLoop.Loan loan = loop.lend(null);
        group.shutdownGracefully(0, 5, TimeUnit.SECONDS);
        // The borrower does not poll: the own thread takes the loop back to shut it down.
        assertTrue(group.awaitTermination(10, TimeUnit.SECONDS), "terminated while lent and not polled");
        assertFalse(loan.open());
        assertEquals(0, loan.progress());
        loan.close();
        assertThrows(IllegalStateException.class, () -> loop.lend(null));
    }

    @Test
    void aLoanClosedFromWithinAPollIsGivenBackAsThePollEnds() throws Exception {
        String own = ownThreadName();
        LendingEventLoop.Loan loan = loop.lend(null);
        AtomicInteger ran = new AtomicInteger();
        Thread other = new Thread(() -> loop.execute(() -> {
            loan.close(); // a callback the poll runs closes the loan
            ran.incrementAndGet();
        }));
        other.start();
        spin(10_000, () -> !other.isAlive());
        pollUntil(loan, () -> ran.get() == 1, "the closing task");
        assertFalse(loan.open(), "given back as the poll ended");
        assertFalse(loop.lent());
        assertEquals(own, ownThreadName());
    }

    @Test
    void aBorrowerThatBlocksLosesTheLoop() throws Exception {
        String own = ownThreadName();
        LendingEventLoop.Loan loan = loop.lend(null);
        // Blocked (here on a future only the own thread would complete): the own thread takes the loop
        // back and runs the task.
        String ran = loop.submit(() -> Thread.currentThread().getName()).get(10, TimeUnit.SECONDS);
        assertEquals(own, ran);
        assertFalse(loan.open());
        assertEquals(0, loan.progress());
        loan.close();
        LendingEventLoop.Loan again = loop.lend(null); // it can be taken again
        again.close();
    }

    /**
     * Borrowers come and go (lend, poll a while, close) while other threads submit tasks, on a
     * random schedule from a printed seed: each task runs exactly once, never beside another, always
     * on the thread then in the loop.
     */
    @Test
    void tasksRunOnceAndAloneWhileBorrowersComeAndGo() throws Exception {
        long seed = Long.getLong("fenceline.test.seed", 20261206L);
        System.out.println("LendingEventLoopTest seed: " + seed + " (-Dfenceline.test.seed=" + seed + " repeats it)");
        int submitters = 2;
        int perSubmitter = 20_000;
        AtomicReferenceArray<Integer> runs = new AtomicReferenceArray<>(submitters * perSubmitter);
        AtomicInteger inside = new AtomicInteger();
        AtomicInteger overlaps = new AtomicInteger();
        AtomicInteger outside = new AtomicInteger();
        AtomicInteger done = new AtomicInteger();
        List<Thread> threads = new ArrayList<>();
        for (int s = 0; s < submitters; s++) {
            int first = s * perSubmitter;
            Random r = new Random(seed + s);
            threads.add(new Thread(() -> {
                for (int i = first; i < first + perSubmitter; i++) {
                    int id = i;
                    loop.execute(() -> {
                        if (inside.incrementAndGet() != 1) {
                            overlaps.incrementAndGet();
                        }
                        if (!loop.inEventLoop()) {
                            outside.incrementAndGet();
                        }
                        runs.accumulateAndGet(id, 1, (a, b) -> a == null ? b : a + b);
                        inside.decrementAndGet();
                        done.incrementAndGet();
                    });
                    if (r.nextInt(64) == 0) {
                        Thread.yield();
                    }
                }
            }, "submitter-" + s));
        }
        int borrowers = 2;
        AtomicReference<Throwable> failure = new AtomicReference<>();
        for (int b = 0; b < borrowers; b++) {
            Random r = new Random(seed ^ (0x9E3779B97F4A7C15L * (b + 1)));
            threads.add(new Thread(() -> {
                try {
                    while (done.get() < submitters * perSubmitter) {
                        LendingEventLoop.Loan loan;
                        try {
                            loan = loop.lend(null);
                        } catch (IllegalStateException busy) { // the other borrower holds or wants it
                            Thread.yield();
                            continue;
                        }
                        int polls = r.nextInt(200);
                        for (int i = 0; i < polls; i++) {
                            loan.progress();
                        }
                        loan.close();
                        if (r.nextBoolean()) {
                            Thread.yield();
                        }
                    }
                } catch (Throwable t) {
                    failure.compareAndSet(null, t);
                }
            }, "borrower-" + b));
        }
        threads.forEach(Thread::start);
        for (Thread t : threads) {
            t.join(TimeUnit.SECONDS.toMillis(40));
            assertFalse(t.isAlive(), t.getName() + " still runs (seed " + seed + ")");
        }
        assertEquals(null, failure.get(), "seed " + seed);
        assertEquals(0, overlaps.get(), "two threads ran the loop at once (seed " + seed + ")");
        assertEquals(0, outside.get(), "a task ran on a thread not in the loop (seed " + seed + ")");
        for (int i = 0; i < runs.length(); i++) {
            assertEquals(Integer.valueOf(1), runs.get(i), "task " + i + " runs (seed " + seed + ")");
        }
    }
}
