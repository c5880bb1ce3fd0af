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
 * membership event arrives), until its member is gone; of those withdrawn while their member
 * stays, only the latest {@value #WITHDRAWN_KEPT} per incarnation are kept, so that a member that
 * opens and closes workers for ever does not grow every other member's index.
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

    /**
     * How many workers withdrawn from the receptionist each incarnation keeps indexed. One that
     * closed while its member stays ended its lanes itself; one withdrawn because its member is
     * leaving is needed until the membership event comes, seconds later, unless the member had more
     * workers than this.
     */
    static final int WITHDRAWN_KEPT = 4096;

    /** What {@link #add} made of a description. */
    enum Added {
        /** Indexed under its incarnation. */
        INDEXED,
        /**
         * Its incarnation is gone: not indexed; its own worker counts among the gone ones (see
         * {@link #isGone(UUID)}), another's does not.
         */
        MEMBER_GONE,
        /**
         * Another incarnation's worker, indexed there or gone with it: a worker is one member's, so
         * the description is false (a member replaying another's address) and is not indexed. The
         * first incarnation described with a worker id owns it; a gone incarnation takes only its own.
         */
        CLAIMED
    }

    private final Map<Incarnation, Map<UUID, ClusterWorker>> workers = new HashMap<>();
    /** The incarnation each indexed worker belongs to. */
    private final Map<UUID, Incarnation> owners = new HashMap<>();

    /** Per incarnation, its indexed workers the receptionist no longer lists, oldest first. */
    private final Map<Incarnation, LinkedHashSet<UUID>> withdrawn = new HashMap<>();
    private final LinkedHashSet<Incarnation> gone = new LinkedHashSet<>();
    private final Set<UUID> goneWorkers = new LinkedHashSet<>();

    /**
     * @param w a worker described by its member
     * @return whether it is indexed now, or why not
     */
    Added add(ClusterWorker w) {
        Incarnation i = new Incarnation(w.member(), w.incarnation());
        UUID id = w.address().workerId();
        Incarnation owner = owners.get(id);
        if (gone.contains(i)) {
            if (owner == null) {
                goneWorker(id); // its own, described late: cut off like its others
            } // else another incarnation's: a claim that ended with its claimant
            return Added.MEMBER_GONE;
        }
        if (owner != null ? !owner.equals(i) : goneWorkers.contains(id)) {
            return Added.CLAIMED; // another incarnation's, live or gone
        }
        workers.computeIfAbsent(i, k -> new HashMap<>()).put(id, w);
        owners.put(id, i);
        LinkedHashSet<UUID> out = withdrawn.get(i);
        if (out != null && out.remove(id) && out.isEmpty()) {
            withdrawn.remove(i); // listed again
        }
        return Added.INDEXED;
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
        withdrawn.remove(i);
        Map<UUID, ClusterWorker> of = workers.remove(i);
        if (of == null) {
            return Set.of();
        }
        for (UUID id : of.keySet()) {
            owners.remove(id);
            goneWorker(id);
        }
        return Set.copyOf(of.keySet());
    }

    /** A worker whose member incarnation is gone: remembered, the latest {@value #REMEMBERED} of them. */
    private void goneWorker(UUID id) {
        goneWorkers.add(id);
        while (goneWorkers.size() > REMEMBERED) {
            Iterator<UUID> oldest = goneWorkers.iterator();
            oldest.next();
            oldest.remove();
        }
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
     * The receptionist no longer lists a worker: it stays indexed (its member may be leaving, and its
     * removal must still find it), but past {@value #WITHDRAWN_KEPT} withdrawn workers of one
     * incarnation the oldest is forgotten.
     *
     * @param w the worker
     */
    void withdrawn(ClusterWorker w) {
        Incarnation i = new Incarnation(w.member(), w.incarnation());
        Map<UUID, ClusterWorker> of = workers.get(i);
        if (of == null || !of.containsKey(w.address().workerId())) {
            return;
        }
        LinkedHashSet<UUID> out = withdrawn.computeIfAbsent(i, k -> new LinkedHashSet<>());
        out.add(w.address().workerId());
        if (out.size() > WITHDRAWN_KEPT) {
            Iterator<UUID> oldest = out.iterator();
            UUID forgotten = oldest.next();
            of.remove(forgotten);
            owners.remove(forgotten);
            oldest.remove();
        }
    }

    /**
     * @param member the member
     * @param uid its incarnation
     * @return how many of its workers are indexed though the receptionist no longer lists them
     */
    int withdrawnOf(Address member, long uid) {
        LinkedHashSet<UUID> out = withdrawn.get(new Incarnation(member, uid));
        return out == null ? 0 : out.size();
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
