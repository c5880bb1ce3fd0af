package dev.fenceline.jmx;

/**
 * A worker's figures in JMX, one bean per worker, named
 * {@code dev.fenceline:type=Worker,name=<worker name>}; no dependency beyond the JDK. The same
 * figures as {@link dev.fenceline.Worker#statistics()}, read when asked.
 */
public interface WorkerMXBean {
    /** @return endpoints open now */
    long getOpenEndpoints();

    /** @return endpoints ever connected */
    long getEndpoints();

    /** @return operations issued */
    long getOperations();

    /** @return operations completed successfully */
    long getCompleted();

    /** @return operations completed with an error */
    long getFailed();

    /** @return operations issued and not yet completed */
    long getOutstanding();

    /** @return operations done on the fast path by grant */
    long getFastPath();

    /** @return flushes completed */
    long getFlushes();

    /** @return strong fences started */
    long getStrongFences();

    /** @return lane-table changes applied */
    long getReconfigurations();

    /** @return requests restarted after a reconfiguration */
    long getRestarts();

    /** @return one line per open endpoint: its name, peer, lanes (live or not) and outcome counts */
    String[] getEndpointSummaries();
}
