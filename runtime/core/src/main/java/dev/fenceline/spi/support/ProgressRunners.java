package dev.fenceline.spi.support;

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
    private final List<dev.fenceline.spi.Wakeup> wakeups = new ArrayList<>();
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
            List<Agent> all = new ArrayList<>();
            agents.forEach(a -> all.add(a.agent()));
            r.run("fenceline-progress-" + name, new CompositeAgent(all), shared);
        } else {
            for (ProgressAgent a : agents) {
                IdleStrategy idle = a.wakeup() != null
                        ? new WakeupIdleStrategy(a.wakeup(), maxWaitNanos, () -> r.closing)
                        : threading == Threading.SHARED ? shared : a.idle();
                if (a.wakeup() != null) {
                    r.wakeups.add(a.wakeup());
                }
                r.run("fenceline-progress-" + name + "-" + a.agent().roleName(), a.agent(), idle);
            }
        }
        return r;
    }

    private void run(String thread, Agent agent, IdleStrategy idle) {
        AgentRunner runner = new AgentRunner(idle, t -> LOG.error("progress agent {} failed: {}", agent.roleName(),
                t.toString(), t), null, new Named(agent, thread));
        AgentRunner.startOnThread(runner, task -> {
            Thread t = new Thread(task, thread);
            t.setDaemon(true);
            return t;
        });
        runners.add(runner);
    }

    /** An agent under the name its thread gets (the runner names its thread after the agent's role). */
    private static final class Named implements Agent {
        private final Agent agent;
        private final String name;

        Named(Agent agent, String name) {
            this.agent = agent;
            this.name = name;
        }

        @Override
        public void onStart() {
            agent.onStart();
        }

        @Override
        public int doWork() throws Exception {
            return agent.doWork();
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

    /** Stops every agent's thread and waits for it. */
    @Override
    public void close() {
        closing = true; // an agent with a wake-up stops waiting on it ...
        for (dev.fenceline.spi.Wakeup w : wakeups) {
            w.wake(); // ... and one waiting now wakes, so the close is seen at once
        }
        for (AgentRunner r : runners) {
            r.close();
        }
        runners.clear();
    }
}
