package dev.fenceline.spi.support;

import dev.fenceline.spi.FailStop;
import dev.fenceline.spi.ProgressAgent;
import java.util.ArrayList;
import java.util.List;
import org.agrona.concurrent.Agent;
import org.agrona.concurrent.AgentRunner;
import org.agrona.concurrent.CompositeAgent;
import org.agrona.concurrent.IdleStrategy;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Runs transports' progress agents on threads of their own, as Aeron's threading modes do:
 * {@link Threading#DEDICATED} gives each agent a thread with its own idle strategy,
 * {@link Threading#SHARED} runs all of a worker's agents in turn on one thread. An agent with a
 * {@link dev.fenceline.spi.Wakeup} that has a thread to itself sleeps on its backend's event when
 * idle ({@link WakeupIdleStrategy}); a shared thread that runs several agents cannot wait on one
 * agent's event and uses its configured strategy. Closing stops the threads (each agent's
 * {@code onClose} runs on its thread) and waits for them.
 */
public final class ProgressRunners implements AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(ProgressRunners.class);

    /** How agents get threads. */
    public enum Threading {
        /** A thread per agent. */
        DEDICATED,
        /** One thread for all the agents given. */
        SHARED
    }

    private final List<AgentRunner> runners = new ArrayList<>();
    /** Their threads: one that ended on an Error closes its agents in its uncaught handler, which close waits for. */
    private final List<Thread> threads = new java.util.concurrent.CopyOnWriteArrayList<>();
    /** The longest close waits for a thread that ended on an Error to close its agents. */
    private static final long FAILED_THREAD_JOIN_MILLIS = 10_000;
    private final List<dev.fenceline.spi.Wakeup> wakeups = new ArrayList<>();
    /** Each thread's agents, as a thread that polls may borrow them ({@link #lend}). */
    private final List<Lendable> lendables = new ArrayList<>();
    private volatile boolean closing;

    private ProgressRunners() {
    }

    /** The longest an idle agent waits on its wake-up when the caller does not say. */
    private static final long DEFAULT_MAX_WAIT_NANOS = 1_000_000;

    /**
     * @param name the owner's name, for thread names ({@code fenceline-progress-<name>-...})
     * @param agents the agents, in order
     * @param threading how they get threads
     * @param shared the idle strategy of the shared thread
     * @return the running agents
     */
    public static ProgressRunners start(String name, List<ProgressAgent> agents, Threading threading,
            IdleStrategy shared) {
        return start(name, agents, threading, shared, DEFAULT_MAX_WAIT_NANOS);
    }

    /**
     * @param name the owner's name, for thread names ({@code fenceline-progress-<name>-...})
     * @param agents the agents, in order
     * @param threading how they get threads
     * @param shared the idle strategy of the shared thread
     * @param maxWaitNanos the longest an idle agent with a wake-up waits on it at a time
     * @return the running agents
     */
    public static ProgressRunners start(String name, List<ProgressAgent> agents, Threading threading,
            IdleStrategy shared, long maxWaitNanos) {
        ProgressRunners r = new ProgressRunners();
        if (agents.isEmpty()) {
            return r;
        }
        if (threading == Threading.SHARED && agents.size() > 1) {
            List<Guarded> all = new ArrayList<>();
            agents.forEach(a -> all.add(new Guarded(a.agent()))); // one that fails stops alone
            r.run("fenceline-progress-" + name, new CompositeAgent(new ArrayList<Agent>(all)), all, shared, null);
        } else {
            for (ProgressAgent a : agents) {
                IdleStrategy idle = a.wakeup() != null
                        ? new WakeupIdleStrategy(a.wakeup(), maxWaitNanos, () -> r.closing)
                        : threading == Threading.SHARED ? shared : a.idle();
                if (a.wakeup() != null) {
                    r.wakeups.add(a.wakeup());
                    a.wakeup().ownThread();
                }
                Guarded g = new Guarded(a.agent());
                r.run("fenceline-progress-" + name + "-" + a.agent().roleName(), g, List.of(g), idle, a.wakeup());
            }
        }
        return r;
    }

    /**
     * @param guarded the agents the thread runs: an {@link Error} that reaches the runner, or gets past
     *     it (the JVM delivers the fault of an unsafe memory access asynchronously, at any point of the
     *     loop, even between two calls of {@code doWork}), ends the thread, and each of them is
     *     stopped first, on it
     */
    private void run(String thread, Agent agent, List<Guarded> guarded, IdleStrategy idle,
            dev.fenceline.spi.Wakeup wakeup) {
        Lendable lendable = new Lendable(agent, guarded, wakeup, () -> closing);
        lendables.add(lendable);
        AgentRunner runner = new AgentRunner(idle, t -> {
            LOG.error("progress agent {} failed: {}", agent.roleName(), t.toString(), t);
            if (t instanceof Error e) { // Agrona rethrows it: the thread ends with every agent on it
                guarded.forEach(g -> g.stop(e));
            }
        }, null, new Named(lendable, thread, guarded, lendable.lending));
        AgentRunner.startOnThread(runner, task -> {
            Thread t = new Thread(task, thread);
            lendable.thread = t;
            t.setDaemon(true);
            threads.add(t);
            t.setUncaughtExceptionHandler((th, e) -> {
                // Agrona's runner does not close its agent when its loop throws: closed here, on it
                LOG.error("progress thread {} ended: {}", thread, e.toString(), e);
                for (Guarded g : guarded) {
                    if (e instanceof Error err) {
                        g.stop(err);
                    }
                    try {
                        g.onClose();
                    } catch (RuntimeException | Error again) {
                        LOG.error("progress agent {}: closing it after its thread failed", g.roleName(), again);
                    }
                }
            });
            return t;
        });
        runners.add(runner);
    }

    /**
     * An agent whose loop stops for good at the first {@link Error} it throws, telling the agent if it
     * is a {@link FailStop}: Agrona's runner would rethrow the error and end the thread (and every
     * agent sharing it), leaving the agent's lanes to wait for answers that cannot come. Other
     * exceptions go to the runner's error handler, and the loop goes on, as before. Agent thread.
     */
    private static final class Guarded implements Agent {
        private final Agent agent;
        private boolean stopped;
        private boolean closed;

        Guarded(Agent agent) {
            this.agent = agent;
        }

        @Override
        public void onStart() {
            agent.onStart();
        }

        @Override
        public int doWork() throws Exception {
            if (stopped) {
                return 0;
            }
            try {
                return agent.doWork();
            } catch (Error e) {
                LOG.error("progress agent {} threw {}: it stops for good", agent.roleName(), e.toString(), e);
                stop(e);
                return 0;
            }
        }

        /** Runs the agent no more, and tells it once (agent thread); not once it is closing. */
        void stop(Error cause) {
            if (stopped) {
                return;
            }
            stopped = true;
            if (agent instanceof FailStop f) {
                try {
                    f.failStop(cause);
                } catch (RuntimeException | Error again) {
                    LOG.error("progress agent {}: its fail-stop threw as well", agent.roleName(), again);
                }
            }
        }

        /** @return whether its loop runs no more */
        boolean stopped() {
            return stopped;
        }

        /** Closes the agent once, whoever asks (its runner, or its thread's end); no fail-stop after. */
        @Override
        public void onClose() {
            if (closed) {
                return;
            }
            closed = true;
            stopped = true; // an Error its close throws is no fault of the loop
            agent.onClose();
        }

        @Override
        public String roleName() {
            return agent.roleName();
        }
    }

    /** An agent under the name its thread gets (the runner names its thread after the agent's role). */
    private static final class Named implements Agent {
        /** How long a thread whose agents all stopped parks a pass, rather than spin on their wake-ups. */
        private static final long STOPPED_PARK_NANOS = 1_000_000;
        private final Agent agent;
        private final String name;
        private final List<Guarded> guarded;
        private final Lending lending;

        Named(Agent agent, String name, List<Guarded> guarded, Lending lending) {
            this.agent = agent;
            this.name = name;
            this.guarded = guarded;
            this.lending = lending;
        }

        @Override
        public void onStart() {
            agent.onStart();
        }

        /**
         * Once every agent on the thread stopped, the thread parks until its runner closes: their
         * wake-ups may no longer sleep (a stopped ucx agent takes nothing, so its wait returns at
         * once), and a thread spinning on them would take a core.
         */
        @Override
        public int doWork() throws Exception {
            if (allStopped()) {
                lending.handOverIfWanted(); // a borrower still gets the (stopped) agents at once
                java.util.concurrent.locks.LockSupport.parkNanos(STOPPED_PARK_NANOS);
                return 0;
            }
            return agent.doWork();
        }

        private boolean allStopped() {
            for (int i = 0; i < guarded.size(); i++) {
                if (!guarded.get(i).stopped()) {
                    return false;
                }
            }
            return true;
        }

        @Override
        public void onClose() {
            agent.onClose();
        }

        @Override
        public String roleName() {
            return name;
        }
    }

    /** @return how many threads run the agents */
    public int threads() {
        return runners.size();
    }

    /**
     * Lends every thread's agents to the calling thread (see {@link dev.fenceline.Worker#progressHere()}),
     * one thread after another, the ones taken polled while the next hands over.
     *
     * @param whileWaiting also run on each turn of a wait for a hand-over (the caller's other loans
     *     keep being polled), or null
     * @return their loan, or null where no thread runs agents
     * @throws IllegalStateException if the agents are closing, or another thread holds or wants them
     */
    public dev.fenceline.CallerProgress lend(Runnable whileWaiting) {
        if (lendables.isEmpty()) {
            return null;
        }
        List<Lendable.Loan> loans = new ArrayList<>();
        Runnable pollTaken = () -> {
            for (Lendable.Loan l : loans) {
                l.progress();
            }
            if (whileWaiting != null) {
                whileWaiting.run();
            }
        };
        try {
            for (Lendable l : lendables) {
                Thread t = l.thread;
                if (t != null && !t.isAlive()) {
                    continue; // ended on an Error, its agents stopped and closed: nothing to run
                }
                loans.add(l.lend(pollTaken));
            }
        } catch (RuntimeException e) {
            loans.forEach(Lendable.Loan::close);
            throw e;
        }
        return CombinedProgress.of(loans);
    }

    /**
     * One thread's agents, which a polling thread may borrow ({@link Lending}): the thread offers
     * them between two duty cycles and waits; the borrower runs their duty cycle in its polls.
     */
    private static final class Lendable implements Agent {
        private final Agent agent;
        private final List<Guarded> guarded;
        final Lending lending;
        /** The runner's thread, set as it is made. */
        volatile Thread thread;

        Lendable(Agent agent, List<Guarded> guarded, dev.fenceline.spi.Wakeup wakeup,
                java.util.function.BooleanSupplier closing) {
            this.agent = agent;
            this.guarded = guarded;
            this.lending = new Lending("progress agent " + agent.roleName(), () -> {
                if (wakeup != null) {
                    wakeup.wake(); // out of its sleep on the backend's event
                }
                Thread t = thread;
                if (t != null) {
                    java.util.concurrent.locks.LockSupport.unpark(t); // out of an idle strategy's park
                }
            }, closing);
        }

        @Override
        public void onStart() {
            agent.onStart();
        }

        @Override
        public int doWork() throws Exception {
            lending.handOverIfWanted();
            return agent.doWork();
        }

        @Override
        public void onClose() {
            agent.onClose();
        }

        @Override
        public String roleName() {
            return agent.roleName();
        }

        Loan lend(Runnable whileWaiting) {
            if (Thread.currentThread() == thread) {
                throw new IllegalStateException(thread.getName() + " is this progress agent's own thread");
            }
            return new Loan(lending.lend(whileWaiting));
        }

        /** The agents' duty cycle, lent to one thread. */
        final class Loan implements dev.fenceline.CallerProgress {
            private final Lending.Loan loan;
            /** {@link #duty}, made once: a method reference written in {@link #progress} was an object per poll. */
            private final java.util.function.IntSupplier duty = this::duty;

            Loan(Lending.Loan loan) {
                this.loan = loan;
            }

            /** @return the duty cycle's work (0 once the loan has ended) */
            @Override
            public int progress() {
                return loan.poll(duty);
            }

            private int duty() {
                try {
                    return agent.doWork();
                } catch (Exception e) { // as the runner's error handler: logged, and the agent goes on
                    LOG.error("progress agent {} failed in a borrowed duty cycle: {}", agent.roleName(), e.toString(),
                            e);
                    return 0;
                } catch (Error e) { // as on its own thread: every agent of the thread stops for good
                    LOG.error("progress agent {} failed in a borrowed duty cycle: {}; its agents stop",
                            agent.roleName(), e.toString(), e);
                    guarded.forEach(g -> g.stop(e));
                    return 0;
                }
            }

            @Override
            public void close() {
                loan.close();
            }
        }
    }

    /** Stops every agent's thread and waits for it. */
    @Override
    public void close() {
        closing = true; // an agent with a wake-up stops waiting on it ...
        for (dev.fenceline.spi.Wakeup w : wakeups) {
            w.wake(); // ... and one waiting now wakes, so the close is seen at once
        }
        for (Lendable l : lendables) { // a thread whose agents are lent takes them back at once
            Thread t = l.thread;
            if (t != null) {
                java.util.concurrent.locks.LockSupport.unpark(t);
            }
        }
        for (AgentRunner r : runners) {
            r.close();
        }
        runners.clear();
        // A runner whose loop threw returns from close at once, while its thread may still be closing
        // its agents: the transport's close must not run beside that.
        for (Thread t : threads) {
            try {
                t.join(FAILED_THREAD_JOIN_MILLIS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                break;
            }
        }
        threads.clear();
    }
}
