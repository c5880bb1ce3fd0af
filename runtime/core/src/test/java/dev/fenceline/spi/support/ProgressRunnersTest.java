package dev.fenceline.spi.support;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.fenceline.spi.ProgressAgent;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.agrona.concurrent.Agent;
import org.agrona.concurrent.SleepingIdleStrategy;
import org.agrona.concurrent.YieldingIdleStrategy;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** Progress agents on dedicated threads or one shared thread; closing stops them on their threads. */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class ProgressRunnersTest {
    /** Counts its turns and remembers the threads it ran on. */
    private static class Counting implements Agent {
        final String role;
        /** What each turn reports as done (0: idle, so that its thread waits as configured). */
        volatile int work;
        final AtomicInteger turns = new AtomicInteger();
        final Set<String> threads = ConcurrentHashMap.newKeySet();
        volatile String closedOn;

        Counting(String role) {
            this.role = role;
        }

        @Override
        public int doWork() {
            turns.incrementAndGet();
            threads.add(Thread.currentThread().getName());
            return work;
        }

        @Override
        public void onClose() {
            closedOn = Thread.currentThread().getName();
        }

        @Override
        public String roleName() {
            return role;
        }
    }

    private static void awaitTurns(Counting... agents) throws InterruptedException {
        long end = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        for (Counting a : agents) {
            while (a.turns.get() < 3) {
                assertTrue(System.nanoTime() < end, a.role + " never ran");
                Thread.sleep(1);
            }
        }
    }

    @Test
    void dedicatedGivesEachAgentAThreadOfItsOwn() throws Exception {
        Counting a = new Counting("inbox");
        Counting b = new Counting("uct");
        ProgressRunners r = ProgressRunners.start("w1", List.of(new ProgressAgent(a, new SleepingIdleStrategy(100_000)),
                new ProgressAgent(b, new YieldingIdleStrategy())), ProgressRunners.Threading.DEDICATED, null);
        awaitTurns(a, b);
        assertEquals(2, r.threads());
        assertEquals(Set.of("fenceline-progress-w1-inbox"), a.threads);
        assertEquals(Set.of("fenceline-progress-w1-uct"), b.threads);
        r.close();
        assertEquals("fenceline-progress-w1-inbox", a.closedOn, "closed on its own thread, before close returns");
        int after = a.turns.get();
        Thread.sleep(20);
        assertEquals(after, a.turns.get(), "no turn after close");
    }

    @Test
    void sharedRunsEveryAgentInTurnOnOneThread() throws Exception {
        Counting a = new Counting("inbox");
        Counting b = new Counting("uct");
        ProgressRunners r = ProgressRunners.start("w2", List.of(new ProgressAgent(a, null), new ProgressAgent(b, null)),
                ProgressRunners.Threading.SHARED, new SleepingIdleStrategy(100_000));
        awaitTurns(a, b);
        assertEquals(1, r.threads());
        assertEquals(Set.of("fenceline-progress-w2"), a.threads);
        assertEquals(a.threads, b.threads);
        r.close();
        assertEquals("fenceline-progress-w2", b.closedOn);
    }

    /** A wake-up that counts waits and lets one end by {@link #wake}, as an eventfd would. */
    private static class CountingWakeup implements dev.fenceline.spi.Wakeup {
        final java.util.concurrent.Semaphore events = new java.util.concurrent.Semaphore(0);
        final java.util.concurrent.atomic.AtomicInteger waits = new java.util.concurrent.atomic.AtomicInteger();
        final java.util.concurrent.atomic.AtomicInteger ownThreads = new java.util.concurrent.atomic.AtomicInteger();
        volatile long lastTimeout;

        @Override
        public void ownThread() {
            ownThreads.incrementAndGet();
        }

        @Override
        public void await(long timeoutNanos) {
            lastTimeout = timeoutNanos; // before the count: a test that sees the count reads this
            waits.incrementAndGet();
            try {
                events.tryAcquire(timeoutNanos, TimeUnit.NANOSECONDS);
                events.drainPermits();
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }

        @Override
        public void wake() {
            events.release();
        }
    }

    /**
     * An agent with a wake-up that runs on a thread of its own is told so once, before its first
     * pass (it may then keep deadlines of its own); one that shares a thread with another is not.
     */
    @Test
    void anAgentWithAThreadOfItsOwnIsToldSoBeforeItsFirstPass() throws Exception {
        for (ProgressRunners.Threading threading : ProgressRunners.Threading.values()) {
            CountingWakeup wakeup = new CountingWakeup();
            AtomicInteger toldAtFirstPass = new AtomicInteger(-1);
            Agent agent = new Agent() {
                @Override
                public int doWork() {
                    toldAtFirstPass.compareAndSet(-1, wakeup.ownThreads.get());
                    return 0;
                }

                @Override
                public String roleName() {
                    return "uct";
                }
            };
            Counting other = new Counting("inbox");
            try (ProgressRunners r = ProgressRunners.start("w8", List.of(new ProgressAgent(agent,
                    new org.agrona.concurrent.BusySpinIdleStrategy(), wakeup), new ProgressAgent(other,
                    new YieldingIdleStrategy())), threading, new YieldingIdleStrategy(), TimeUnit.MILLISECONDS.toNanos(1))) {
                long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
                while (toldAtFirstPass.get() < 0) {
                    assertTrue(System.nanoTime() < deadline, threading + ": the agent never ran");
                    Thread.onSpinWait();
                }
                int expected = threading == ProgressRunners.Threading.DEDICATED ? 1 : 0;
                assertEquals(expected == 1 ? 2 : 1, r.threads(), threading + ": its threads");
                assertEquals(expected, toldAtFirstPass.get(), threading + ": told at its first pass");
                assertEquals(expected, wakeup.ownThreads.get(), threading + ": told once, or never");
            }
        }
    }

    /**
     * An idle agent with a wake-up sleeps on it, for at most the configured wait, rather than on
     * its own idle strategy; work handed over with a wake is done at once; close wakes it.
     */
    @Test
    void anIdleAgentWithAWakeupSleepsOnItAndAWakeEndsTheSleep() throws Exception {
        CountingWakeup wakeup = new CountingWakeup();
        java.util.concurrent.atomic.AtomicBoolean work = new java.util.concurrent.atomic.AtomicBoolean();
        java.util.concurrent.CountDownLatch done = new java.util.concurrent.CountDownLatch(1);
        org.agrona.concurrent.Agent agent = new org.agrona.concurrent.Agent() {
            @Override
            public int doWork() {
                if (work.getAndSet(false)) {
                    done.countDown();
                    return 1;
                }
                return 0;
            }

            @Override
            public String roleName() {
                return "uct";
            }
        };
        long wait = TimeUnit.SECONDS.toNanos(30); // longer than the test: only a wake can end a wait in time
        ProgressRunners r = ProgressRunners.start("w4", List.of(new ProgressAgent(agent,
                new org.agrona.concurrent.BusySpinIdleStrategy(), wakeup)), ProgressRunners.Threading.DEDICATED, null,
                wait);
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        while (wakeup.waits.get() == 0) {
            assertTrue(System.nanoTime() < deadline, "the idle agent never waited on its wake-up");
            Thread.onSpinWait();
        }
        assertEquals(wait, wakeup.lastTimeout, "the wait is bounded by the configured time");
        work.set(true);
        wakeup.wake();
        assertTrue(done.await(10, TimeUnit.SECONDS), "a wake ends the wait and the work is done");
        long closeStarted = System.nanoTime();
        r.close();
        // AgentRunner interrupts a thread that has not stopped after 5 s; close must not need that.
        assertTrue(System.nanoTime() - closeStarted < TimeUnit.SECONDS.toNanos(2), "close wakes a waiting agent");
    }

    /** Throws an {@link Error} on its third turn, and is told once it stops (a transport's agent). */
    private static class Failing extends Counting implements dev.fenceline.spi.FailStop {
        final java.util.List<String> stops = new java.util.concurrent.CopyOnWriteArrayList<>();
        final java.util.concurrent.CountDownLatch stopped = new java.util.concurrent.CountDownLatch(1);

        Failing(String role) {
            super(role);
        }

        @Override
        public int doWork() {
            super.doWork();
            if (turns.get() == 3) {
                throw new InternalError("test: a fault occurred in an unsafe memory access operation");
            }
            return 0;
        }

        @Override
        public void failStop(Error cause) {
            stops.add(Thread.currentThread().getName() + ": " + cause.getMessage());
            stopped.countDown();
        }
    }

    /**
     * An agent whose loop throws an Error stops for good, its fail-stop told once on its thread; its
     * thread lives on (closing runs its onClose there), and an agent sharing the thread goes on.
     */
    @Test
    void anAgentThatThrowsAnErrorIsFailStoppedAndItsThreadLivesOn() throws Exception {
        Failing dedicated = new Failing("uct");
        ProgressRunners r = ProgressRunners.start("w5", List.of(new ProgressAgent(dedicated,
                new SleepingIdleStrategy(100_000))), ProgressRunners.Threading.DEDICATED, null);
        Failing failing = new Failing("inbox");
        Counting beside = new Counting("uct");
        ProgressRunners shared = ProgressRunners.start("w6", List.of(new ProgressAgent(failing, null),
                new ProgressAgent(beside, null)), ProgressRunners.Threading.SHARED, new SleepingIdleStrategy(100_000));
        try {
            assertTrue(dedicated.stopped.await(10, TimeUnit.SECONDS), "the agent's fail-stop was told");
            assertTrue(failing.stopped.await(10, TimeUnit.SECONDS), "the sharing agent's fail-stop was told");
            int besideTurns = beside.turns.get();
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
            while (beside.turns.get() < besideTurns + 3) {
                assertTrue(System.nanoTime() < deadline, "the agent sharing the thread stopped with the one that threw");
                Thread.sleep(1);
            }
            assertEquals(3, dedicated.turns.get(), "no turn after the Error");
            assertEquals(3, failing.turns.get());
        } finally {
            r.close();
            shared.close();
        }
        assertEquals(List.of("fenceline-progress-w5-uct: test: a fault occurred in an unsafe memory access operation"),
                dedicated.stops, "told once, on the agent's thread");
        assertEquals(1, failing.stops.size());
        assertEquals("fenceline-progress-w5-uct", dedicated.closedOn, "its thread lived on to close it");
        assertEquals("fenceline-progress-w6", beside.closedOn);
    }

    /**
     * The JVM delivers the fault of an unsafe memory access asynchronously: the Error may surface
     * after the agent's doWork returned (here: in its idle strategy). It then reaches Agrona's runner,
     * which ends the thread; the agent on it is fail-stopped first, once.
     */
    @Test
    void anErrorOutsideDoWorkFailStopsTheAgentBeforeItsThreadEnds() throws Exception {
        Failing told = new Failing("inbox") {
            @Override
            public int doWork() {
                turns.incrementAndGet();
                return 0; // never throws itself
            }
        };
        java.util.concurrent.atomic.AtomicInteger idles = new java.util.concurrent.atomic.AtomicInteger();
        org.agrona.concurrent.IdleStrategy faulting = new org.agrona.concurrent.IdleStrategy() {
            @Override
            public void idle(int workCount) {
                idle();
            }

            @Override
            public void idle() {
                if (idles.incrementAndGet() == 3) {
                    throw new InternalError("test: a fault occurred in a recent unsafe memory access operation");
                }
            }

            @Override
            public void reset() {
            }
        };
        ProgressRunners r = ProgressRunners.start("w7", List.of(new ProgressAgent(told, faulting)),
                ProgressRunners.Threading.DEDICATED, null);
        try {
            assertTrue(told.stopped.await(10, TimeUnit.SECONDS), "the agent's fail-stop was told");
        } finally {
            r.close();
        }
        assertEquals(List.of("fenceline-progress-w7-inbox: test: a fault occurred in a recent unsafe memory access"
                + " operation"), told.stops, "once, on the agent's thread");
        assertEquals("fenceline-progress-w7-inbox", told.closedOn, "closed on its thread as it ended");
    }

    /**
     * A stopped agent's thread does not spin: its wake-up may no longer sleep (a stopped ucx agent's
     * returns at once), so the thread parks between passes until it is closed.
     */
    @Test
    void aThreadWhoseAgentsAllStoppedDoesNotSpin() throws Exception {
        Failing failing = new Failing("uct");
        CountingWakeup returnsAtOnce = new CountingWakeup() {
            @Override
            public void await(long timeoutNanos) {
                waits.incrementAndGet();
            }
        };
        ProgressRunners r = ProgressRunners.start("w8", List.of(new ProgressAgent(failing,
                new SleepingIdleStrategy(100_000), returnsAtOnce)), ProgressRunners.Threading.DEDICATED, null);
        try {
            assertTrue(failing.stopped.await(10, TimeUnit.SECONDS), "the agent's fail-stop was told");
            int before = returnsAtOnce.waits.get();
            Thread.sleep(200);
            int passes = returnsAtOnce.waits.get() - before;
            assertTrue(passes < 2_000, passes + " passes in 200 ms after the agent stopped: the thread spins");
        } finally {
            r.close();
        }
        assertEquals("fenceline-progress-w8-uct", failing.closedOn, "closed once its runner closes");
    }

    @Test
    void noAgentsNoThreads() {
        try (ProgressRunners r = ProgressRunners.start("w3", List.of(), ProgressRunners.Threading.SHARED, null)) {
            assertEquals(0, r.threads());
        }
    }

    /** Waits without blocking (a borrower that blocks 10 ms or more loses its loan) until {@code done}. */
    private static void spinUntil(java.util.function.BooleanSupplier done, String what) {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        while (!done.getAsBoolean()) {
            assertTrue(System.nanoTime() - deadline < 0, "not within 10 s: " + what);
            Thread.onSpinWait();
        }
    }

    /**
     * Lent, the agents of every thread (dedicated, one sleeping on its wake-up; or shared) run only
     * in the borrower's polls, on its thread; given back, on their own threads again.
     */
    @Test
    void lentAgentsRunOnlyInTheBorrowersPolls() throws Exception {
        for (ProgressRunners.Threading threading : ProgressRunners.Threading.values()) {
            Counting a = new Counting("a");
            Counting b = new Counting("b");
            CountingWakeup wakeup = new CountingWakeup();
            ProgressRunners r = ProgressRunners.start("w5", List.of(new ProgressAgent(a, new YieldingIdleStrategy()),
                    new ProgressAgent(b, new YieldingIdleStrategy(), wakeup)), threading, new YieldingIdleStrategy(),
                    TimeUnit.SECONDS.toNanos(30));
            try {
                awaitTurns(a, b);
                dev.fenceline.CallerProgress loan = r.lend(null);
                String me = Thread.currentThread().getName();
                int aTurns = a.turns.get();
                int bTurns = b.turns.get();
                long until = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(50);
                while (System.nanoTime() - until < 0) {
                    Thread.onSpinWait();
                }
                assertTrue(a.turns.get() - aTurns <= 1 && b.turns.get() - bTurns <= 1,
                        threading + ": lent agents do not run on their own threads (a cycle under way may end)");
                a.threads.clear();
                b.threads.clear();
                a.work = 1;
                int done = 0;
                for (int i = 0; i < 100; i++) {
                    done += loan.progress();
                }
                a.work = 0;
                assertTrue(done >= 100, threading + ": the borrower's polls run the agents: " + done);
                assertEquals(Set.of(me), a.threads, threading + ": a ran on the borrower only");
                assertEquals(Set.of(me), b.threads, threading + ": b ran on the borrower only");
                IllegalStateException second = assertThrowsOn(r);
                assertTrue(second.getMessage().contains("lent to " + me), second.getMessage());
                loan.close();
                a.threads.clear();
                spinUntil(() -> !a.threads.isEmpty(), "a back on its thread");
                assertTrue(!a.threads.contains(me), threading + ": given back: " + a.threads);
            } finally {
                r.close();
            }
            assertTrue(a.closedOn != null && !a.closedOn.equals(Thread.currentThread().getName()),
                    "closed on its own thread: " + a.closedOn);
        }
    }

    private static IllegalStateException assertThrowsOn(ProgressRunners r) throws InterruptedException {
        java.util.concurrent.atomic.AtomicReference<Throwable> refused = new java.util.concurrent.atomic.AtomicReference<>();
        Thread other = new Thread(() -> {
            try {
                r.lend(null);
            } catch (Throwable t) {
                refused.set(t);
            }
        }, "second-borrower");
        other.start();
        spinUntil(() -> !other.isAlive(), "the second borrower");
        assertTrue(refused.get() instanceof IllegalStateException, "a second borrower is refused: " + refused.get());
        return (IllegalStateException) refused.get();
    }

    /** Closing the runners while their agents are lent, and not polled, is prompt; the loan then ends. */
    @Test
    void closingWhileLentTakesTheAgentsBackAtOnce() throws Exception {
        Counting a = new Counting("a");
        ProgressRunners r = ProgressRunners.start("w6", List.of(new ProgressAgent(a, new SleepingIdleStrategy(
                TimeUnit.MILLISECONDS.toNanos(1)))), ProgressRunners.Threading.DEDICATED, null);
        awaitTurns(a);
        dev.fenceline.CallerProgress loan = r.lend(null);
        a.work = 1;
        assertEquals(1, loan.progress(), "lent: the borrower runs it");
        long started = System.nanoTime();
        r.close();
        assertTrue(System.nanoTime() - started < TimeUnit.SECONDS.toNanos(2), "close does not wait on the loan");
        assertTrue(a.closedOn != null && a.closedOn.startsWith("fenceline-progress-w6"), "closed on its thread: "
                + a.closedOn);
        assertEquals(0, loan.progress(), "the loan ended with the runners");
        loan.close();
    }

    /** A borrower that blocks loses the agents to their own thread. */
    @Test
    void aBorrowerThatBlocksLosesTheAgents() throws Exception {
        Counting a = new Counting("a");
        ProgressRunners r = ProgressRunners.start("w7", List.of(new ProgressAgent(a, new YieldingIdleStrategy())),
                ProgressRunners.Threading.DEDICATED, null);
        try {
            awaitTurns(a);
            dev.fenceline.CallerProgress loan = r.lend(null);
            a.work = 1;
            assertEquals(1, loan.progress(), "lent: the borrower runs it");
            a.threads.clear();
            Thread.sleep(100); // blocked: taken back after two looks 10 ms apart
            spinUntil(() -> !a.threads.isEmpty(), "a on its own thread again");
            assertEquals(0, loan.progress(), "the loan ended");
            loan.close();
        } finally {
            r.close();
        }
    }

    /** A thread whose agents all stopped (fail-stopped) still hands them over at once; their cycle does nothing. */
    @Test
    void stoppedAgentsAreLentAtOnce() throws Exception {
        Failing f = new Failing("f");
        ProgressRunners r = ProgressRunners.start("w8", List.of(new ProgressAgent(f, new YieldingIdleStrategy())),
                ProgressRunners.Threading.DEDICATED, null);
        try {
            assertTrue(f.stopped.await(10, TimeUnit.SECONDS), "fail-stopped");
            long started = System.nanoTime();
            dev.fenceline.CallerProgress loan = r.lend(null);
            assertTrue(System.nanoTime() - started < TimeUnit.SECONDS.toNanos(2), "handed over at once");
            int turns = f.turns.get();
            assertEquals(0, loan.progress());
            assertEquals(turns, f.turns.get(), "a stopped agent runs no more, lent or not");
            loan.close();
        } finally {
            r.close();
        }
    }
}
