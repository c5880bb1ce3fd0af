package dev.fenceline.actor;

import dev.fenceline.Endpoint;
import dev.fenceline.EndpointStatistics;
import dev.fenceline.LaneStatistics;
import dev.fenceline.Worker;
import dev.fenceline.WorkerStatistics;
import dev.fenceline.jmx.WorkerMXBean;
import java.lang.management.ManagementFactory;
import javax.management.JMException;
import javax.management.MBeanServer;
import javax.management.ObjectName;
import org.slf4j.LoggerFactory;

/** A worker's JMX bean: reads the worker's statistics when asked; registered while the worker lives. */
final class WorkerMBean implements WorkerMXBean {
    private final Worker worker;
    private final ObjectName name;

    private WorkerMBean(Worker worker, ObjectName name) {
        this.worker = worker;
        this.name = name;
    }

    /**
     * @param worker the worker
     * @return its bean, registered, or null if JMX refused it (logged)
     */
    static WorkerMBean register(Worker worker) {
        try {
            ObjectName n = new ObjectName("dev.fenceline:type=Worker,name=" + ObjectName.quote(worker.name()));
            MBeanServer server = ManagementFactory.getPlatformMBeanServer();
            if (server.isRegistered(n)) { // two workers of one name (two runtimes in one JVM): keep both visible
                n = new ObjectName("dev.fenceline:type=Worker,name=" + ObjectName.quote(worker.name())
                        + ",instance=" + System.identityHashCode(worker));
            }
            WorkerMBean bean = new WorkerMBean(worker, n);
            server.registerMBean(bean, n);
            return bean;
        } catch (JMException | RuntimeException e) { // a security manager's refusal too: the worker runs on without
            LoggerFactory.getLogger(WorkerMBean.class).warn("worker {}: no JMX bean: {}", worker.name(), e.toString());
            return null;
        }
    }

    /** Unregisters the bean (the worker closed). */
    void unregister() {
        try {
            ManagementFactory.getPlatformMBeanServer().unregisterMBean(name);
        } catch (JMException | RuntimeException e) { // gone already, or refused: the worker closes all the same
            LoggerFactory.getLogger(WorkerMBean.class).debug("worker {}: JMX bean not unregistered: {}", worker.name(),
                    e.toString());
        }
    }

    private WorkerStatistics s() {
        return worker.statistics();
    }

    @Override
    public long getOpenEndpoints() {
        return s().openEndpoints();
    }

    @Override
    public long getEndpoints() {
        return s().endpoints();
    }

    @Override
    public long getOperations() {
        return s().operations();
    }

    @Override
    public long getCompleted() {
        return s().completed();
    }

    @Override
    public long getFailed() {
        return s().failed();
    }

    @Override
    public long getOutstanding() {
        return s().outstanding();
    }

    @Override
    public long getFastPath() {
        return s().direct();
    }

    @Override
    public long getFlushes() {
        return s().flushes();
    }

    @Override
    public long getStrongFences() {
        return s().strongFences();
    }

    @Override
    public long getReconfigurations() {
        return s().reconfigurations();
    }

    @Override
    public long getRestarts() {
        return s().restarts();
    }

    @Override
    public String[] getEndpointSummaries() {
        return worker.endpoints().stream().map(WorkerMBean::summary).toArray(String[]::new);
    }

    private static String summary(Endpoint ep) {
        EndpointStatistics s = ep.statistics();
        StringBuilder lanes = new StringBuilder();
        for (LaneStatistics l : s.lanes()) {
            lanes.append(lanes.length() == 0 ? "" : " ").append(l.index()).append(':').append(l.transport())
                    .append(l.live() ? "" : "(down)");
        }
        return s.endpoint() + " -> " + ep.peer().name() + " [" + lanes + "] ops " + s.operations() + " ok "
                + s.completed() + " failed " + s.failed() + " outstanding " + s.outstanding() + " flush p99 "
                + s.flushLatency().p99() / 1000 + " us";
    }
}
