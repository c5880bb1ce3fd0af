package dev.fenceline.cluster;

import dev.fenceline.WorkerAddress;
import java.util.Objects;
import org.apache.pekko.actor.Address;

/**
 * A worker advertised by a member of the cluster.
 *
 * @param member the member's address (protocol, system, host and port)
 * @param incarnation the member's incarnation: a node that restarts at the same address is a new
 *     member with a new incarnation, and its workers are new workers
 * @param name the worker's name
 * @param address what to connect to
 */
public record ClusterWorker(Address member, long incarnation, String name, WorkerAddress address) {
    /**
     * Checks that nothing is missing.
     *
     * @param member the member's address
     * @param incarnation the member's incarnation
     * @param name the worker's name
     * @param address what to connect to
     */
    public ClusterWorker {
        Objects.requireNonNull(member, "member");
        Objects.requireNonNull(name, "name");
        Objects.requireNonNull(address, "address");
    }
}
