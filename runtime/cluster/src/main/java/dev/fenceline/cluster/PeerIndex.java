package dev.fenceline.cluster;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.Iterator;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.UUID;
import org.apache.pekko.actor.Address;

/**
 * Which workers belong to which member incarnation, and which incarnations are gone: plain data,
 * kept by the directory actor, tested without a cluster. A worker stays indexed after the
 * receptionist forgot it (the receptionist may drop a removed member's workers before the
 * membership event arrives), until its member is gone.
 */
final class PeerIndex {
    /** A member incarnation. */
    record Incarnation(Address member, long uid) {
        Incarnation {
            Objects.requireNonNull(member, "member");
        }
    }

    /** How many gone incarnations are remembered, to refuse their late descriptions. */
    static final int REMEMBERED = 4096;

    private final Map<Incarnation, Map<UUID, ClusterWorker>> workers = new HashMap<>();
    private final LinkedHashSet<Incarnation> gone = new LinkedHashSet<>();
    private final Set<UUID> goneWorkers = new LinkedHashSet<>();

    /**
     * @param w a worker described by its member
     * @return false if its member incarnation is gone already (then it is not indexed)
     */
    boolean add(ClusterWorker w) {
        Incarnation i = new Incarnation(w.member(), w.incarnation());
        if (gone.contains(i)) {
            return false;
        }
        workers.computeIfAbsent(i, k -> new HashMap<>()).put(w.address().workerId(), w);
        return true;
    }

    /**
     * The incarnation left the cluster (downed or removed): its workers are gone for good.
     *
     * @param member the member
     * @param uid its incarnation
     * @return the ids of its workers (empty if it is gone already or had none)
     */
    Set<UUID> memberGone(Address member, long uid) {
        Incarnation i = new Incarnation(member, uid);
        if (!gone.add(i)) {
            return Set.of();
        }
        if (gone.size() > REMEMBERED) {
            Iterator<Incarnation> oldest = gone.iterator();
            oldest.next();
            oldest.remove();
        }
        Map<UUID, ClusterWorker> of = workers.remove(i);
        if (of == null) {
            return Set.of();
        }
        goneWorkers.addAll(of.keySet());
        while (goneWorkers.size() > REMEMBERED) {
            Iterator<UUID> oldest = goneWorkers.iterator();
            oldest.next();
            oldest.remove();
        }
        return Set.copyOf(of.keySet());
    }

    /**
     * @param member the member
     * @param uid its incarnation
     * @return the ids of its workers now
     */
    Set<UUID> workersOf(Address member, long uid) {
        Map<UUID, ClusterWorker> of = workers.get(new Incarnation(member, uid));
        return of == null ? Set.of() : Set.copyOf(of.keySet());
    }

    /**
     * @param workerId a worker
     * @return whether its member incarnation is gone
     */
    boolean isGone(UUID workerId) {
        return goneWorkers.contains(workerId);
    }

    /**
     * @param member the member
     * @param uid its incarnation
     * @return whether that incarnation is gone
     */
    boolean isGone(Address member, long uid) {
        return gone.contains(new Incarnation(member, uid));
    }

    /**
     * A worker withdrawn while its member stays (the worker closed): forgotten.
     *
     * @param w the worker
     */
    void withdrawn(ClusterWorker w) {
        Map<UUID, ClusterWorker> of = workers.get(new Incarnation(w.member(), w.incarnation()));
        if (of != null) {
            of.remove(w.address().workerId());
            if (of.isEmpty()) {
                workers.remove(new Incarnation(w.member(), w.incarnation()));
            }
        }
    }

    /** @return the ids of workers whose member incarnation is gone (the latest {@value #REMEMBERED}) */
    Set<UUID> goneWorkers() {
        return Set.copyOf(goneWorkers);
    }

    /** @return every indexed worker */
    List<ClusterWorker> all() {
        List<ClusterWorker> out = new ArrayList<>();
        workers.values().forEach(m -> out.addAll(m.values()));
        return out;
    }

    /** @return the member incarnations indexed now */
    Set<Incarnation> incarnations() {
        return new HashSet<>(workers.keySet());
    }
}
