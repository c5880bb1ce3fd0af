package dev.fenceline.cluster;

import dev.fenceline.Endpoint;
import dev.fenceline.Worker;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Consumer;
import java.util.function.Supplier;
import org.apache.pekko.actor.Address;
import org.apache.pekko.actor.typed.ActorRef;
import org.apache.pekko.actor.typed.Behavior;
import org.apache.pekko.actor.typed.javadsl.ActorContext;
import org.apache.pekko.actor.typed.javadsl.Behaviors;
import org.apache.pekko.actor.typed.javadsl.TimerScheduler;
import org.apache.pekko.actor.typed.receptionist.Receptionist;
import org.apache.pekko.cluster.ClusterEvent;
import org.apache.pekko.cluster.Member;
import org.apache.pekko.cluster.typed.Cluster;
import org.apache.pekko.cluster.typed.Subscribe;

/**
 * This member's view of the cluster's Fenceline workers: it follows the receptionist's listing of
 * advertisers, asks each new one which worker it is, and follows membership. When a member
 * incarnation is downed or removed, every endpoint of this member's workers to that incarnation's
 * workers is aborted at once (its requests end with the outcome the runtime's rules give); when
 * a member becomes unreachable, those endpoints probe their lanes, which is a hint and fails
 * nothing by itself. What it knows is published as an immutable {@link View} for callers.
 */
final class Directory {
    private Directory() {
    }

    /** The directory's protocol (all of it local). */
    sealed interface Command {
    }

    /** The receptionist's listing of every advertiser changed. */
    record Listed(Receptionist.Listing listing) implements Command {
    }

    /** An advertiser said which worker it is, or did not answer in time. */
    record Described(ActorRef<Advertiser.Command> ref, Advertiser.Description description, Throwable error)
            implements Command {
    }

    /** Ask an advertiser again, after it did not answer. */
    record Redescribe(ActorRef<Advertiser.Command> ref) implements Command {
    }

    /** A membership change. */
    record MemberChanged(ClusterEvent.MemberEvent event) implements Command {
    }

    /** A reachability change. */
    record ReachabilityChanged(ClusterEvent.ReachabilityEvent event) implements Command {
    }

    /**
     * Answer with the worker once it is known (the newest-discovered of that member and name, or the
     * one with that id), or not at all after the deadline.
     *
     * @param member the member's address
     * @param name the worker's name
     * @param workerId the worker's id, or null for any of that name
     * @param deadline {@link System#nanoTime()} after which no one waits
     * @param replyTo gets the worker
     */
    record Find(Address member, String name, UUID workerId, long deadline, ActorRef<ClusterWorker> replyTo)
            implements Command {
    }

    /** Timer: forget finders whose caller gave up. */
    record Prune() implements Command {
        static final Prune INSTANCE = new Prune();
    }

    /**
     * What the directory knows, for callers on any thread.
     *
     * @param workers the workers listed now, in the order they were discovered
     * @param advertisers each listed worker's advertiser, by worker id
     * @param gone ids of workers whose member incarnation was downed or removed (the latest few thousand)
     */
    record View(List<ClusterWorker> workers, Map<UUID, ActorRef<Advertiser.Command>> advertisers, Set<UUID> gone) {
        static final View EMPTY = new View(List.of(), Map.of(), Set.of());
    }

    /**
     * @param workers the runtime's open workers, whose endpoints follow membership (its {@code workers()})
     * @param settings the cluster settings
     * @param view where the directory publishes what it knows
     * @return the behavior
     */
    static Behavior<Command> create(Supplier<List<Worker>> workers, ClusterSettings settings,
            AtomicReference<View> view) {
        return create(workers, settings, view, ids -> { });
    }

    /**
     * @param workers the runtime's open workers, whose endpoints follow membership (its {@code workers()})
     * @param settings the cluster settings
     * @param view where the directory publishes what it knows
     * @param released told (on the directory's thread) the ids of workers whose shared endpoints are
     *     to be closed: of a gone member (once the endpoints to them were aborted), or withdrawn (their
     *     advertiser stopped: the worker closed, or its member left)
     * @return the behavior
     */
    static Behavior<Command> create(Supplier<List<Worker>> workers, ClusterSettings settings,
            AtomicReference<View> view, Consumer<Set<UUID>> released) {
        return Behaviors.setup(ctx -> Behaviors.withTimers(timers -> {
            ActorRef<Receptionist.Listing> listings = ctx.messageAdapter(Receptionist.Listing.class, Listed::new);
            ctx.getSystem().receptionist().tell(Receptionist.subscribe(Advertiser.ALL, listings));
            Cluster cluster = Cluster.get(ctx.getSystem());
            cluster.subscriptions().tell(Subscribe.create(
                    ctx.messageAdapter(ClusterEvent.MemberEvent.class, MemberChanged::new), ClusterEvent.MemberEvent.class));
            cluster.subscriptions().tell(Subscribe.create(
                    ctx.messageAdapter(ClusterEvent.ReachabilityEvent.class, ReachabilityChanged::new),
                    ClusterEvent.ReachabilityEvent.class));
            return new State(ctx, timers, workers, settings, cluster, view, released).running();
        }));
    }

    private static final class State {
        private final ActorContext<Command> ctx;
        private final TimerScheduler<Command> timers;
        private final Supplier<List<Worker>> workers;
        private final ClusterSettings settings;
        private final Cluster cluster;
        private final AtomicReference<View> view;
        private final Consumer<Set<UUID>> released;
        private final PeerIndex index = new PeerIndex();
        /** The advertisers the receptionist lists now. */
        private Set<ActorRef<Advertiser.Command>> current = Set.of();
        /** Those that said who they are, in the order they did. */
        private final Map<ActorRef<Advertiser.Command>, ClusterWorker> described = new LinkedHashMap<>();
        private final Set<ActorRef<Advertiser.Command>> asking = new HashSet<>();
        /** Advertisers whose description membership contradicted (logged once while listed). */
        private final Set<ActorRef<Advertiser.Command>> contradicted = new HashSet<>();
        /**
         * Advertisers of a gone member incarnation, not asked again while listed: asked, each would
         * be cut off again, its workers refused and their endpoints aborted once more, until the
         * receptionist drops it.
         */
        private final Set<ActorRef<Advertiser.Command>> settled = new HashSet<>();
        private final List<Find> waiting = new ArrayList<>();

        State(ActorContext<Command> ctx, TimerScheduler<Command> timers, Supplier<List<Worker>> workers,
                ClusterSettings settings, Cluster cluster, AtomicReference<View> view, Consumer<Set<UUID>> released) {
            this.ctx = ctx;
            this.released = released;
            this.timers = timers;
            this.workers = workers;
            this.settings = settings;
            this.cluster = cluster;
            this.view = view;
        }

        Behavior<Command> running() {
            return Behaviors.receive(Command.class)
                    .onMessage(Listed.class, this::onListed)
                    .onMessage(Described.class, this::onDescribed)
                    .onMessage(Redescribe.class, m -> {
                        if (current.contains(m.ref()) && !described.containsKey(m.ref()) && !settled.contains(m.ref())) {
                            describe(m.ref());
                        }
                        return Behaviors.same();
                    })
                    .onMessage(MemberChanged.class, this::onMemberChanged)
                    .onMessage(ReachabilityChanged.class, this::onReachabilityChanged)
                    .onMessage(Find.class, this::onFind)
                    .onMessage(Prune.class, m -> {
                        long now = System.nanoTime();
                        waiting.removeIf(f -> now - f.deadline() > 0);
                        if (!waiting.isEmpty()) {
                            timers.startSingleTimer(Prune.INSTANCE, settings.askTimeout());
                        }
                        return Behaviors.same();
                    })
                    .build();
        }

        private Behavior<Command> onListed(Listed m) {
            // Every advertiser, reachable or not: the failure detector's suspicion withdraws nothing
            // (a member flagged for a moment would leave every view, and its lookups fail).
            current = Set.copyOf(m.listing().getAllServiceInstances(Advertiser.ALL));
            // A withdrawn advertiser is no longer offered, but its worker stays indexed until its
            // member goes (the receptionist may drop a removed member's workers first), within the
            // index's bound on withdrawn workers.
            Set<UUID> withdrawn = new java.util.HashSet<>();
            for (Iterator<Map.Entry<ActorRef<Advertiser.Command>, ClusterWorker>> it = described.entrySet().iterator();
                    it.hasNext();) {
                Map.Entry<ActorRef<Advertiser.Command>, ClusterWorker> e = it.next();
                if (!current.contains(e.getKey())) {
                    index.withdrawn(e.getValue());
                    withdrawn.add(e.getValue().address().workerId());
                    it.remove();
                }
            }
            if (!withdrawn.isEmpty()) {
                // Its advertiser stopped (the worker closed) or its member left: a shared endpoint to
                // it would stay among its worker's endpoints, failed, failing that worker's flush.
                released.accept(withdrawn);
            }
            contradicted.retainAll(current);
            settled.retainAll(current);
            for (ActorRef<Advertiser.Command> ref : current) {
                if (!described.containsKey(ref) && !asking.contains(ref) && !settled.contains(ref)) {
                    describe(ref);
                }
            }
            publish();
            return Behaviors.same();
        }

        private void describe(ActorRef<Advertiser.Command> ref) {
            asking.add(ref);
            ctx.ask(Advertiser.Description.class, ref, settings.askTimeout(), Advertiser.Describe::new,
                    (d, e) -> new Described(ref, d, e));
        }

        private Behavior<Command> onDescribed(Described m) {
            asking.remove(m.ref());
            if (!current.contains(m.ref())) {
                return Behaviors.same(); // withdrawn meanwhile
            }
            if (m.error() != null) {
                ctx.getLog().debug("cluster: advertiser {} did not say who it is ({}); asking again", m.ref(), m.error());
                timers.startSingleTimer(new Redescribe(m.ref()), settings.askTimeout());
                return Behaviors.same();
            }
            Address member = memberOf(m.ref());
            long claimed = m.description().incarnation();
            Long known = incarnationAt(member);
            if (known != null && known != claimed) {
                // A member lying about its incarnation would escape the cut-off of the real one when
                // it goes; an old incarnation's late answer names one that is gone anyway.
                // Asked again later, should membership be what changes (a view not yet caught up).
                if (contradicted.add(m.ref())) {
                    ctx.getLog().warn("cluster: advertiser {} says its member {} is incarnation {}, but membership"
                            + " knows incarnation {} there: its worker {} is not offered", m.ref(), member, claimed,
                            known, m.description().address().workerId());
                }
                timers.startSingleTimer(new Redescribe(m.ref()), settings.askTimeout());
                return Behaviors.same();
            }
            ClusterWorker w = new ClusterWorker(member, claimed, m.description().address().name(),
                    m.description().address());
            PeerIndex.Added added = index.add(w);
            if (added == PeerIndex.Added.CLAIMED) { // asked again as the listing changes
                // Offered, the claimant would answer lookups for that worker, and its going would
                // cut the real one off.
                if (contradicted.add(m.ref())) {
                    ctx.getLog().warn("cluster: advertiser {} of member {} describes worker {}, which is another"
                            + " member incarnation's: not offered", m.ref(), member,
                            m.description().address().workerId());
                }
                return Behaviors.same();
            }
            contradicted.remove(m.ref());
            if (added == PeerIndex.Added.MEMBER_GONE) {
                settled.add(m.ref());
                if (index.isGone(w.address().workerId())) { // its own worker, not a claim on another's
                    // Its member incarnation went before it was described (the description was on its
                    // way, or a reachable member was downed): cut off like that incarnation's others.
                    publish();
                    cutOff(Set.of(w.address().workerId()), w.member(), "gone before it was described");
                }
                return Behaviors.same();
            }
            described.put(m.ref(), w);
            publish(); // first: whoever is answered next reads the view
            answerWaiting();
            return Behaviors.same();
        }

        /** @return the incarnation (unique address uid) membership knows at {@code member}, or null */
        private Long incarnationAt(Address member) {
            for (Member m : cluster.state().getMembers()) {
                if (m.address().equals(member)) {
                    return m.uniqueAddress().longUid();
                }
            }
            return null;
        }

        private Address memberOf(ActorRef<?> ref) {
            Address a = ref.path().address();
            return a.hasGlobalScope() ? a : cluster.selfMember().address();
        }

        private Behavior<Command> onMemberChanged(MemberChanged m) {
            if (m.event() instanceof ClusterEvent.MemberDowned d) {
                gone(d.member(), "downed");
            } else if (m.event() instanceof ClusterEvent.MemberRemoved r) {
                gone(r.member(), "removed");
            }
            return Behaviors.same();
        }

        private void gone(Member member, String how) {
            Address address = member.uniqueAddress().address();
            long uid = member.uniqueAddress().longUid();
            Set<UUID> ids = index.memberGone(address, uid);
            described.entrySet().removeIf(e -> {
                boolean of = e.getValue().member().equals(address) && e.getValue().incarnation() == uid;
                if (of) {
                    settled.add(e.getKey());
                }
                return of;
            });
            // Published before the endpoints are listed: a connect that completes meanwhile lists its
            // endpoint before it reads the view, so either it sees the workers gone and aborts the
            // endpoint itself, or the listing below holds it.
            publish();
            cutOff(ids, address, how);
        }

        /**
         * Workers of a gone member incarnation: what they still send (a member paused past its
         * downing, say) is not applied here, and the endpoints to them are aborted.
         */
        private void cutOff(Set<UUID> ids, Address address, String how) {
            for (Worker w : workers.get()) {
                for (UUID id : ids) {
                    w.refusePeer(id, "its cluster member " + address + " was " + how);
                }
            }
            int aborted = forEachEndpointTo(ids, e -> e.abort("cluster member " + address + " was " + how));
            released.accept(ids);
            if (!ids.isEmpty()) {
                ctx.getLog().info("cluster: member {} was {}: its {} worker(s) refused, {} endpoint(s) to them aborted",
                        address, how, ids.size(), aborted);
            }
        }

        private Behavior<Command> onReachabilityChanged(ReachabilityChanged m) {
            if (m.event() instanceof ClusterEvent.UnreachableMember u && settings.probeOnUnreachable()) {
                Set<UUID> ids = index.workersOf(u.member().uniqueAddress().address(), u.member().uniqueAddress().longUid());
                int probed = forEachEndpointTo(ids, Endpoint::probeLanes);
                ctx.getLog().info("cluster: member {} is unreachable: {} endpoint(s) to it probe their lanes",
                        u.member().address(), probed);
            }
            return Behaviors.same();
        }

        private int forEachEndpointTo(Set<UUID> peers, Consumer<Endpoint> action) {
            if (peers.isEmpty()) {
                return 0;
            }
            int n = 0;
            for (Worker w : workers.get()) {
                for (Endpoint e : w.endpoints()) {
                    if (peers.contains(e.peer().workerId())) {
                        action.accept(e);
                        n++;
                    }
                }
            }
            return n;
        }

        private Behavior<Command> onFind(Find f) {
            ClusterWorker w = find(f);
            if (w != null) {
                f.replyTo().tell(w);
            } else {
                if (waiting.isEmpty()) {
                    timers.startSingleTimer(Prune.INSTANCE, settings.askTimeout());
                }
                waiting.add(f);
            }
            return Behaviors.same();
        }

        private ClusterWorker find(Find f) {
            ClusterWorker found = null;
            for (ClusterWorker w : described.values()) {
                if (w.member().equals(f.member()) && w.name().equals(f.name())
                        && (f.workerId() == null || f.workerId().equals(w.address().workerId()))) {
                    found = w; // the latest discovered wins: a restarted member's workers come after the old ones
                }
            }
            return found;
        }

        private void answerWaiting() {
            waiting.removeIf(f -> {
                ClusterWorker w = find(f);
                if (w != null) {
                    f.replyTo().tell(w);
                }
                return w != null;
            });
        }

        private void publish() {
            Map<UUID, ActorRef<Advertiser.Command>> refs = new HashMap<>();
            described.forEach((ref, w) -> refs.put(w.address().workerId(), ref));
            view.set(new View(List.copyOf(described.values()), Map.copyOf(refs), index.goneWorkers()));
        }
    }
}
