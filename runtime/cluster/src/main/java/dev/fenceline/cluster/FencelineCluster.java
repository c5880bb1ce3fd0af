package dev.fenceline.cluster;

import dev.fenceline.Endpoint;
import dev.fenceline.EndpointFailedException;
import dev.fenceline.Fenceline;
import dev.fenceline.FencelineException;
import dev.fenceline.LaneEvent;
import dev.fenceline.LaneInfo;
import dev.fenceline.MemoryRegion;
import dev.fenceline.RemoteAccessException;
import dev.fenceline.RemoteKey;
import dev.fenceline.Worker;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Function;
import org.apache.pekko.Done;
import org.apache.pekko.actor.Address;
import org.apache.pekko.actor.typed.ActorRef;
import org.apache.pekko.actor.typed.ActorSystem;
import org.apache.pekko.actor.typed.Extension;
import org.apache.pekko.actor.typed.ExtensionId;
import org.apache.pekko.actor.typed.Props;
import org.apache.pekko.actor.typed.javadsl.AskPattern;
import org.apache.pekko.cluster.MemberStatus;
import org.apache.pekko.cluster.typed.Cluster;

/**
 * Fenceline in a Pekko Cluster: one per actor system, beside {@link Fenceline#get(ActorSystem)}.
 *
 * <ul>
 *   <li><b>Discovery</b>: {@link #advertise(Worker)} makes a worker known to every member (through
 *       the receptionist, under the key of all Fenceline workers and under its name's);
 *       {@link #workers()} lists what this member knows, and {@link #worker(Address, String)} waits
 *       for a given member's worker.
 *   <li><b>Endpoints</b>: {@link #connect(Worker, ClusterWorker)} gives one shared endpoint per pair
 *       of workers, and a new one once that endpoint failed or was closed; an endpoint to a worker
 *       whose member incarnation is gone is never handed out.
 *   <li><b>Regions by name</b>: {@link #publish(Worker, String, MemoryRegion)} names a region of an
 *       advertised worker; {@link #lookup(Worker, ClusterWorker, String)} asks that worker for the
 *       key. The owner answers, so a key is never older than the region it names (a region closed without
 *       {@link #unpublish} is no longer found).
 *   <li><b>Membership drives failure</b>: when a member is downed or removed, every endpoint of
 *       this runtime's workers to that member's workers is aborted at once ({@link Endpoint#abort}):
 *       what was sent and not answered fails with {@code OutcomeUnknownException}, what the lane
 *       could withdraw or never sent with {@code EndpointFailedException}; the shared endpoints
 *       {@link #connect(Worker, ClusterWorker)} gave to them are then closed (later calls on them
 *       still fail with the {@code EndpointFailedException} that names the member). When a member becomes
 *       unreachable, those endpoints probe their lanes ({@link Endpoint#probeLanes()}), a hint
 *       that fails nothing by itself.
 * </ul>
 *
 * <p>The actor system must be a cluster one ({@code pekko.actor.provider = cluster}). Messages between
 * members, and {@link dev.fenceline.WorkerAddress} and {@link RemoteKey} in a service's own messages,
 * are serialized by {@link FencelineSerializer}, bound in this module's {@code reference.conf}.
 */
public final class FencelineCluster implements Extension {
    /** The longest region name, in characters. */
    static final int MAX_REGION_NAME = 256;

    private final ActorSystem<?> system;
    private final Fenceline fenceline;
    private final ClusterSettings settings;
    private final Cluster cluster;
    private final AtomicReference<Directory.View> view = new AtomicReference<>(Directory.View.EMPTY);
    private final ActorRef<Directory.Command> directory;
    private final Map<UUID, Advertised> advertised = new ConcurrentHashMap<>();
    private final Map<Pair, CompletableFuture<Endpoint>> endpoints = new ConcurrentHashMap<>();
    private final java.util.Set<UUID> watched = ConcurrentHashMap.newKeySet();
    private final AtomicLong names = new AtomicLong();

    /** An advertised worker of this member. */
    private record Advertised(Worker worker, ActorRef<Advertiser.Command> ref, CompletionStage<ClusterWorker> listed) {
    }

    /** A local worker and a peer worker. */
    private record Pair(UUID local, UUID peer) {
    }

    private FencelineCluster(ActorSystem<?> system) {
        this.system = system;
        this.fenceline = Fenceline.get(system);
        this.settings = ClusterSettings.fromConfig(system.settings().config());
        this.cluster = Cluster.get(system);
        this.directory = system.systemActorOf(Directory.create(fenceline::workers, settings, view,
                this::releaseGone), "fenceline-cluster", Props.empty());
        // A system actor stops only after remoting has ended, and Pekko 1.7's remoting may never end
        // (a TLS association to a killed member keeps a stream open): the directory would outlive the
        // system's termination. Its work is over once the workers closed (service-stop, before).
        org.apache.pekko.actor.CoordinatedShutdown.get(system).addTask(
                org.apache.pekko.actor.CoordinatedShutdown.PhaseBeforeActorSystemTerminate(),
                "fenceline-cluster-directory", () -> {
                    org.apache.pekko.actor.typed.javadsl.Adapter.toClassic(system)
                            .stop(org.apache.pekko.actor.typed.javadsl.Adapter.toClassic(directory));
                    return CompletableFuture.completedFuture(Done.getInstance());
                });
    }

    /**
     * @param system a cluster actor system
     * @return its Fenceline cluster extension
     */
    public static FencelineCluster get(ActorSystem<?> system) {
        return Id.INSTANCE.apply(system);
    }

    /** @return the Fenceline runtime of this actor system */
    public Fenceline fenceline() {
        return fenceline;
    }

    /**
     * Makes a worker of this member known to the cluster, until it closes.
     *
     * @param worker a worker of this actor system's runtime
     * @return completes once this member's own directory lists it (other members follow as the
     *     receptionist spreads it); the same stage for the same worker, unless that one failed
     */
    public CompletionStage<ClusterWorker> advertise(Worker worker) {
        return advertise(worker, Map.of());
    }

    /**
     * Makes a worker of this member known to the cluster with regions already published: a member
     * that finds the worker can look them up at once (publishing after {@link #advertise(Worker)}
     * leaves a moment in which another member sees the worker and not yet the name).
     *
     * @param worker a worker of this actor system's runtime
     * @param regions regions of {@code worker} to publish, by name (1 to 256 characters each)
     * @return completes once this member's own directory lists it; the same stage for the same
     *     worker, unless that one failed (then it looks again); regions given to a later call are
     *     ignored: {@link #publish} them
     */
    public CompletionStage<ClusterWorker> advertise(Worker worker, Map<String, MemoryRegion> regions) {
        Objects.requireNonNull(worker, "worker");
        Map<String, MemoryRegion> keys = new java.util.HashMap<>();
        regions.forEach((name, region) -> {
            checkOwned(worker, region);
            keys.put(checkName(name), region);
        });
        if (!fenceline.workers().contains(worker)) {
            return CompletableFuture.failedFuture(new IllegalArgumentException("worker '" + worker.name()
                    + "' is not an open worker of this actor system's Fenceline runtime"));
        }
        UUID id = worker.address().workerId();
        Advertised a = advertised.computeIfAbsent(id, k -> {
            long incarnation = cluster.selfMember().uniqueAddress().longUid();
            ActorRef<Advertiser.Command> ref = system.systemActorOf(Advertiser.create(worker.address(), incarnation, keys),
                    "fenceline-advertiser-" + names.incrementAndGet(), Props.empty());
            CompletionStage<ClusterWorker> listed = find(cluster.selfMember().address(), worker.name(), id);
            return new Advertised(worker, ref, listed);
        });
        worker.whenClosed().thenRun(() -> {
            if (advertised.remove(id, a)) {
                a.ref().tell(Advertiser.WorkerClosed.INSTANCE);
            }
        });
        if (a.listed().toCompletableFuture().isCompletedExceptionally()) {
            return find(cluster.selfMember().address(), worker.name(), id); // it timed out before: look again
        }
        return a.listed();
    }

    /** @return the workers of the cluster that this member knows now, its own included */
    public List<ClusterWorker> workers() {
        return view.get().workers();
    }

    /**
     * @param member a member's address
     * @param name the name of a worker it advertises
     * @return the worker, once this member knows it (the one discovered last if a restarted member
     *     advertises a worker of that name again); fails after {@code fenceline.cluster.ask-timeout}
     */
    public CompletionStage<ClusterWorker> worker(Address member, String name) {
        return find(Objects.requireNonNull(member, "member"), Objects.requireNonNull(name, "name"), null);
    }

    private CompletionStage<ClusterWorker> find(Address member, String name, UUID workerId) {
        long deadline = System.nanoTime() + settings.askTimeout().toNanos();
        return ask(directory, r -> new Directory.Find(member, name, workerId, deadline, r),
                () -> "no worker '" + name + "' of member " + member + " is known here within "
                        + settings.askTimeout() + " (known: " + workers() + ")");
    }

    /**
     * Connects a worker of this member to a worker of the cluster; connecting again gives the same
     * endpoint while it has a live lane, a new one after it failed or was closed. Closing the endpoint
     * closes it for every caller that got it; one that fails is closed by the module (later calls on
     * it still fail with why it failed).
     *
     * @param local a worker of this actor system's runtime
     * @param peer a worker from {@link #workers()} or {@link #worker(Address, String)}
     * @return the endpoint; fails with {@link EndpointFailedException} if the peer's member is gone
     */
    public CompletionStage<Endpoint> connect(Worker local, ClusterWorker peer) {
        Objects.requireNonNull(local, "local");
        Objects.requireNonNull(peer, "peer");
        UUID peerId = peer.address().workerId();
        Pair key = new Pair(local.address().workerId(), peerId);
        if (view.get().gone().contains(peerId)) {
            release(endpoints.remove(key)); // its endpoint was aborted: nothing to keep
            return CompletableFuture.failedFuture(goneError(peer));
        }
        forgetWhenClosed(local);
        CompletableFuture<Endpoint> shared = endpoints.compute(key, (k, existing) -> {
            if (existing != null && (!existing.isDone() || usable(existing))) {
                return existing;
            }
            if (existing != null && !existing.isCompletedExceptionally()) {
                existing.join().close(); // failed: release it, the new one replaces it
            }
            return local.connect(peer.address()).toCompletableFuture();
        });
        if (local.whenClosed().toCompletableFuture().isDone()) {
            endpoints.remove(key, shared); // closed meanwhile: its forgetting may have run before this entry
        }
        return shared.thenApply(ep -> { // outside compute: it may remove the entry
            // Its member went while connecting. The worker listed ep before this runs, and the directory
            // publishes gone workers before it lists the endpoints to abort: this or the directory aborts
            // it, and this or the directory's release finds the entry.
            if (view.get().gone().contains(peerId)) {
                ep.abort("cluster member " + peer.member() + " is gone");
                if (endpoints.remove(key, shared)) {
                    release(shared);
                }
                throw goneError(peer); // as when it was gone before: no caller gets an aborted endpoint
            }
            return ep;
        });
    }

    /**
     * @param local a worker of this actor system's runtime
     * @param member a member's address
     * @param workerName the name of a worker it advertises
     * @return the endpoint, as {@link #connect(Worker, ClusterWorker)} gives it
     */
    public CompletionStage<Endpoint> connect(Worker local, Address member, String workerName) {
        return worker(member, workerName).thenCompose(w -> connect(local, w));
    }

    /**
     * The directory aborted the endpoints to workers whose member went, or no longer lists workers
     * (closed, or their member left): the shared ones are closed and forgotten, as no caller gets
     * them again (left open, each would stay among its worker's endpoints, failed, counted open and
     * failing the worker's flush, for the worker's life).
     */
    private void releaseGone(java.util.Set<UUID> peers) {
        if (peers.isEmpty()) {
            return;
        }
        for (java.util.Iterator<Map.Entry<Pair, CompletableFuture<Endpoint>>> it = endpoints.entrySet().iterator();
                it.hasNext();) {
            Map.Entry<Pair, CompletableFuture<Endpoint>> e = it.next();
            if (peers.contains(e.getKey().peer()) && endpoints.remove(e.getKey(), e.getValue())) {
                release(e.getValue()); // only the one removed: a connect may have put another since
            }
        }
    }

    /**
     * Closes a shared endpoint once it is connected (a connect that failed left nothing to close),
     * after its abort was handled: a flush queued now fails behind it, and only then does the close
     * mark it closing, so that a held reference never sees 'closed' where it should see why it failed.
     */
    private static void release(CompletableFuture<Endpoint> shared) {
        if (shared != null) {
            shared.thenAccept(ep -> ep.flush().whenComplete((v, e) -> ep.close()));
        }
    }

    /**
     * Watches a local worker (once per worker): a shared endpoint of it that fails is closed and
     * forgotten at once (left until the next connect to its peer, which may never come, it stayed
     * among the worker's endpoints, failing the worker's flush), and all are forgotten when it closes.
     */
    private void forgetWhenClosed(Worker local) {
        UUID id = local.address().workerId();
        if (watched.add(id)) {
            AutoCloseable failures = local.addLaneEventListener(e -> {
                if (e instanceof LaneEvent.EndpointFailed f) {
                    releaseFailed(new Pair(id, f.peer().workerId()), f.endpoint());
                }
            });
            local.whenClosed().thenRun(() -> {
                endpoints.keySet().removeIf(k -> k.local().equals(id));
                watched.remove(id);
                try {
                    failures.close();
                } catch (Exception e) {
                    throw new IllegalStateException(e); // the worker's listener sets do not throw
                }
            });
        }
    }

    /**
     * An endpoint failed: the shared one of the pair is released if it is that endpoint (once its
     * connect completes: an endpoint may fail, and say so, before its connect's stage does).
     */
    private void releaseFailed(Pair key, String endpoint) {
        CompletableFuture<Endpoint> shared = endpoints.get(key);
        if (shared != null) {
            shared.thenAccept(ep -> {
                if (ep.statistics().endpoint().equals(endpoint) && endpoints.remove(key, shared)) {
                    release(shared);
                }
            });
        }
    }

    private static boolean usable(CompletableFuture<Endpoint> f) {
        if (f.isCompletedExceptionally()) {
            return false;
        }
        return f.join().lanes().stream().anyMatch(LaneInfo::live);
    }

    private static EndpointFailedException goneError(ClusterWorker peer) {
        return new EndpointFailedException("worker '" + peer.name() + "' of cluster member " + peer.member()
                + " (incarnation " + peer.incarnation() + ") is gone: its member was downed or removed");
    }

    /**
     * Names a region of an advertised worker, so that any member can {@link #lookup} its key.
     *
     * @param worker the region's worker, advertised by {@link #advertise(Worker)}
     * @param name the name, 1 to 256 characters; an earlier region of that name is replaced
     * @param region a region of {@code worker}
     * @return completes once published
     */
    public CompletionStage<Void> publish(Worker worker, String name, MemoryRegion region) {
        checkName(name);
        checkOwned(worker, region);
        Advertised a = advertised.get(worker.address().workerId());
        if (a == null) {
            return CompletableFuture.failedFuture(new IllegalStateException("worker '" + worker.name()
                    + "' is not advertised: call advertise(worker) first"));
        }
        return this.<Advertiser.Command, Done>ask(a.ref(), r -> new Advertiser.Publish(name, region, r),
                () -> "publishing region '" + name + "' of worker '" + worker.name() + "' timed out")
                .thenApply(d -> null);
    }

    /**
     * @param worker an advertised worker
     * @param name a name it published
     * @return completes once the name is withdrawn (whether or not it was published)
     */
    public CompletionStage<Void> unpublish(Worker worker, String name) {
        checkName(name);
        Advertised a = advertised.get(worker.address().workerId());
        if (a == null) {
            return CompletableFuture.completedFuture(null);
        }
        return this.<Advertiser.Command, Done>ask(a.ref(), r -> new Advertiser.Unpublish(name, r),
                () -> "withdrawing region '" + name + "' of worker '" + worker.name() + "' timed out")
                .thenApply(d -> null);
    }

    /**
     * Asks a worker of the cluster for the key of the region it published under {@code name}.
     *
     * @param local the worker that will use the key (it is unpacked for its transports)
     * @param peer the region's worker
     * @param name the name it was published under
     * @return the key; fails with {@link RemoteAccessException} ({@code UNKNOWN_KEY}) if the peer
     *     publishes nothing under that name, ({@code WRONG_PEER}) if the answer is another worker's key
     */
    public CompletionStage<RemoteKey> lookup(Worker local, ClusterWorker peer, String name) {
        checkName(name);
        ActorRef<Advertiser.Command> ref = view.get().advertisers().get(peer.address().workerId());
        if (ref == null) {
            return CompletableFuture.failedFuture(view.get().gone().contains(peer.address().workerId())
                    ? goneError(peer) : new FencelineException("worker '" + peer.name() + "' of member "
                    + peer.member() + " is not listed here (it closed, or is not known yet)"));
        }
        return this.<Advertiser.Command, Advertiser.RegionAnswer>ask(ref,
                r -> new Advertiser.Lookup(name, r), () -> "worker '" + peer.name() + "' of member " + peer.member()
                        + " did not answer a lookup of region '" + name + "' within " + settings.askTimeout())
                .thenApply(answer -> {
                    if (answer.key() == null) {
                        throw new RemoteAccessException(RemoteAccessException.Reason.UNKNOWN_KEY, "worker '"
                                + peer.name() + "' of member " + peer.member() + " publishes no region named '" + name
                                + "'");
                    }
                    if (!answer.key().ownerId().equals(peer.address().workerId())) {
                        throw new RemoteAccessException(RemoteAccessException.Reason.WRONG_PEER, "worker '"
                                + peer.name() + "' answered region '" + name + "' with key " + answer.key().shortKey()
                                + " of another worker (" + answer.key().ownerId() + ")");
                    }
                    return local.unpackRemoteKey(answer.key().toBytes());
                });
    }

    private static String checkName(String name) {
        Objects.requireNonNull(name, "name");
        if (name.isEmpty() || name.length() > MAX_REGION_NAME) {
            throw new IllegalArgumentException("a region name has 1 to " + MAX_REGION_NAME + " characters, not "
                    + name.length());
        }
        return name;
    }

    private static void checkOwned(Worker worker, MemoryRegion region) {
        RemoteKey key = region.remoteKey();
        if (!key.ownerId().equals(worker.address().workerId())) {
            throw new IllegalArgumentException("region " + key.shortKey() + " belongs to another worker than '"
                    + worker.name() + "'");
        }
    }

    /**
     * Ready: this member is up in the cluster, and every worker it advertises is listed by its own
     * directory (so the receptionist took it). Wire it into any health check; with Pekko Management,
     * {@link FencelineReadinessCheck} does.
     *
     * @return whether this member's Fenceline side is ready to serve
     */
    public boolean isReady() {
        if (cluster.selfMember().status() != MemberStatus.up()) {
            return false;
        }
        Map<UUID, ActorRef<Advertiser.Command>> listed = view.get().advertisers();
        return advertised.keySet().stream().allMatch(listed::containsKey);
    }

    /** An ask whose continuation runs on the actor system's dispatcher, with a clear timeout error. */
    private <Q, A> CompletionStage<A> ask(ActorRef<Q> to, Function<ActorRef<A>, Q> message,
            java.util.function.Supplier<String> timeoutMessage) {
        return relayed(AskPattern.<Q, A>ask(to, message::apply, settings.askTimeout(), system.scheduler()),
                system.executionContext(), timeoutMessage);
    }

    /**
     * @param answer an ask's answer
     * @param executor where the caller's continuations run
     * @param timeoutMessage what a timeout says
     * @return the answer, completed on {@code executor}, or at once with the refusal if the executor
     *     refuses (a dispatcher shut down meanwhile: otherwise the stage would never complete)
     */
    static <A> CompletionStage<A> relayed(CompletionStage<A> answer, java.util.concurrent.Executor executor,
            java.util.function.Supplier<String> timeoutMessage) {
        CompletableFuture<A> relayed = new CompletableFuture<>();
        answer.whenCompleteAsync((a, e) -> {
            if (e == null) {
                relayed.complete(a);
            } else if (e instanceof TimeoutException || e.getCause() instanceof TimeoutException) {
                relayed.completeExceptionally(new FencelineException(timeoutMessage.get(), e));
            } else {
                relayed.completeExceptionally(e);
            }
        }, executor).exceptionally(rejected -> { // a dispatcher shut down meanwhile
            relayed.completeExceptionally(rejected);
            return null;
        });
        return relayed;
    }

    /** The extension id. */
    static final class Id extends ExtensionId<FencelineCluster> {
        static final Id INSTANCE = new Id();

        @Override
        public FencelineCluster createExtension(ActorSystem<?> system) {
            return new FencelineCluster(system);
        }
    }
}
