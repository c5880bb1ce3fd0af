package dev.fenceline.cluster;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.fenceline.Endpoint;
import dev.fenceline.Worker;
import dev.fenceline.WorkerAddress;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import org.apache.pekko.actor.typed.ActorRef;
import org.apache.pekko.actor.typed.ActorSystem;
import org.apache.pekko.actor.typed.Props;
import org.apache.pekko.actor.typed.javadsl.Behaviors;
import org.apache.pekko.cluster.ClusterEvent;
import org.apache.pekko.cluster.MemberStatus;
import org.apache.pekko.cluster.typed.Cluster;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** The directory on one member, with a stand-in worker whose endpoint list and endpoint record when they are used. */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class DirectoryTest {
    private ActorSystem<Void> system;

    @AfterEach
    void stop() throws Exception {
        if (system != null) {
            system.terminate();
            system.getWhenTerminated().toCompletableFuture().get(30, TimeUnit.SECONDS);
        }
    }

    /**
     * A connect that completes while a member goes is checked against the view after its endpoint
     * is listed; the directory lists endpoints to abort after it published the gone workers, so
     * either the check sees them gone or the abort sees the endpoint. Here the endpoint list reads
     * the view at the moment the directory takes it.
     */
    @Test
    void theGoneWorkersArePublishedBeforeTheirEndpointsAreListedForAborting() throws Exception {
        Member m = member();
        m.advertise();
        m.down();
        assertTrue(m.aborted.get(30, TimeUnit.SECONDS).contains("was downed"), "its endpoint is aborted");
        assertEquals(Set.of(m.peer.workerId()), m.goneWhenListed.get(), "the view named the peer gone before the"
                + " directory listed the endpoints it aborts");
        assertEquals(Set.of(m.peer.workerId()), m.refused.keySet(), "the local worker refuses the gone one");
        assertTrue(m.refused.get(m.peer.workerId()).contains("was downed"), m.refused.toString());
    }

    /**
     * The receptionist may drop a leaving member's advertisers before the membership event comes:
     * the directory stops offering the worker at once but still aborts the endpoints to it when the
     * member goes.
     */
    @Test
    void aWorkerNoLongerListedIsStillFoundWhenItsMemberGoes() throws Exception {
        Member m = member();
        ActorRef<Advertiser.Command> advertiser = m.advertise();
        advertiser.tell(Advertiser.WorkerClosed.INSTANCE);
        long until = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
        while (!m.view.get().workers().isEmpty() && System.nanoTime() < until) {
            Thread.sleep(20);
        }
        assertEquals(List.of(), m.view.get().workers(), "no longer offered");
        m.down();
        assertTrue(m.aborted.get(30, TimeUnit.SECONDS).contains("was downed"), "its endpoint is still aborted");
    }

    /**
     * A worker described only after its member incarnation went (its description was on its way, or
     * a reachable member was downed) is refused, and the endpoints to it aborted, like the others.
     */
    @Test
    void aWorkerDescribedAfterItsMemberWentIsRefused() throws Exception {
        Member m = member();
        m.down(); // nothing of this member is indexed yet
        long incarnation = m.cluster.selfMember().uniqueAddress().longUid();
        system.systemActorOf(Advertiser.create(m.peer, incarnation, Map.of()), "advertiser-late", Props.empty());
        assertTrue(m.aborted.get(30, TimeUnit.SECONDS).contains("gone before it was described"), "aborted");
        assertEquals(Set.of(m.peer.workerId()), m.refused.keySet(), "the local worker refuses it");
        assertEquals(List.of(), m.view.get().workers(), "not offered");
        assertTrue(m.view.get().gone().contains(m.peer.workerId()), "named gone");
    }

    /**
     * An advertiser whose member incarnation membership contradicts is not offered: listed under a
     * made-up incarnation, its worker would escape the cut-off of the member's real one. The liar
     * answers first; the truthful advertiser is started after, so by the time it is listed the
     * directory has taken the liar's description.
     */
    @Test
    void aWorkerWhoseIncarnationMembershipContradictsIsNotOffered() throws Exception {
        Member m = member();
        long real = m.cluster.selfMember().uniqueAddress().longUid();
        WorkerAddress liar = new WorkerAddress(UUID.randomUUID(), "liar", Map.of());
        CompletableFuture<Void> lied = new CompletableFuture<>();
        system.systemActorOf(Behaviors.<Advertiser.Command>setup(ctx -> {
            ctx.getSystem().receptionist().tell(org.apache.pekko.actor.typed.receptionist.Receptionist.register(
                    Advertiser.ALL, ctx.getSelf()));
            return Behaviors.receive(Advertiser.Command.class).onMessage(Advertiser.Describe.class, d -> {
                d.replyTo().tell(new Advertiser.Description(real + 1, liar));
                lied.complete(null);
                return Behaviors.same();
            }).build();
        }), "advertiser-liar", Props.empty());
        lied.get(30, TimeUnit.SECONDS);
        m.advertise(); // asserts the first worker listed is the truthful one
        assertEquals(List.of(m.peer), m.view.get().workers().stream().map(ClusterWorker::address).toList(),
                "the liar is not offered");
    }

    /**
     * A gone member's advertiser still listed (the receptionist drops it later) is not asked again
     * when the listing changes: asked, it would be cut off again, its workers refused once more.
     * The test's own question goes behind any the directory asked, so the count is exact.
     */
    @Test
    void aGoneMembersAdvertiserIsNotAskedAgain() throws Exception {
        Member m = member();
        long incarnation = m.cluster.selfMember().uniqueAddress().longUid();
        java.util.concurrent.atomic.AtomicInteger asked = new java.util.concurrent.atomic.AtomicInteger();
        ActorRef<Advertiser.Command> advertiser = system.systemActorOf(Behaviors.<Advertiser.Command>setup(ctx -> {
            ctx.getSystem().receptionist().tell(org.apache.pekko.actor.typed.receptionist.Receptionist.register(
                    Advertiser.ALL, ctx.getSelf()));
            return Behaviors.receive(Advertiser.Command.class).onMessage(Advertiser.Describe.class, d -> {
                asked.incrementAndGet();
                d.replyTo().tell(new Advertiser.Description(incarnation, m.peer));
                return Behaviors.same();
            }).build();
        }), "advertiser-counted", Props.empty());
        long until = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
        while (m.view.get().workers().isEmpty() && System.nanoTime() < until) {
            Thread.sleep(20);
        }
        m.down();
        assertTrue(m.aborted.get(30, TimeUnit.SECONDS).contains("was downed"), "cut off once");
        Directory.View before = m.view.get();
        m.directory.tell(new Directory.Listed(Stubs.stub(
                org.apache.pekko.actor.typed.receptionist.Receptionist.Listing.class, (method, args) -> switch (method) {
                    case "getServiceInstances", "getAllServiceInstances" -> Set.of(advertiser); // still listed
                    default -> throw unexpected(org.apache.pekko.actor.typed.receptionist.Receptionist.Listing.class,
                            method);
                })));
        while (m.view.get() == before && System.nanoTime() < until) {
            Thread.sleep(20); // handled: a question it asks is on its way before the view is published
        }
        assertTrue(m.view.get() != before, "the directory handled the listing");
        org.apache.pekko.actor.typed.javadsl.AskPattern.<Advertiser.Command, Advertiser.Description>ask(advertiser,
                Advertiser.Describe::new, java.time.Duration.ofSeconds(30), system.scheduler())
                .toCompletableFuture().get(30, TimeUnit.SECONDS);
        assertEquals(2, asked.get(), "asked once by the directory, once by this test");
        assertEquals(1, m.refusals.get(), "refused once");
    }

    /**
     * A member the failure detector flags unreachable for a moment is not withdrawn: the receptionist
     * lists its advertisers among the unreachable ones, and the directory still offers its workers.
     */
    @Test
    void aWorkerOfAnUnreachableMemberIsStillOffered() throws Exception {
        Member m = member();
        ActorRef<Advertiser.Command> advertiser = m.advertise();
        Directory.View before = m.view.get(); // before the tell: the directory may handle it at once
        m.directory.tell(new Directory.Listed(Stubs.stub(
                org.apache.pekko.actor.typed.receptionist.Receptionist.Listing.class, (method, args) -> switch (method) {
                    case "getServiceInstances" -> Set.of(); // the reachable ones
                    case "getAllServiceInstances" -> Set.of(advertiser);
                    default -> throw unexpected(org.apache.pekko.actor.typed.receptionist.Receptionist.Listing.class,
                            method);
                })));
        long until = System.nanoTime() + TimeUnit.SECONDS.toNanos(5);
        while (m.view.get() == before && System.nanoTime() < until) {
            Thread.sleep(20); // the listing is handled when the view is published again
        }
        assertTrue(m.view.get() != before, "the directory handled the listing");
        assertEquals(List.of(m.peer), m.view.get().workers().stream().map(ClusterWorker::address).toList(),
                "still offered");
    }

    /** This member, up, with a directory whose one stand-in worker has one endpoint to {@link #peer}. */
    private final class Member {
        final Cluster cluster;
        final WorkerAddress peer = new WorkerAddress(UUID.randomUUID(), "peer", Map.of());
        final AtomicReference<Directory.View> view = new AtomicReference<>(Directory.View.EMPTY);
        final CompletableFuture<Set<UUID>> goneWhenListed = new CompletableFuture<>();
        final CompletableFuture<String> aborted = new CompletableFuture<>();
        final Map<UUID, String> refused = new java.util.concurrent.ConcurrentHashMap<>();
        final java.util.concurrent.atomic.AtomicInteger refusals = new java.util.concurrent.atomic.AtomicInteger();
        final ActorRef<Directory.Command> directory;

        Member(Cluster cluster) {
            this.cluster = cluster;
            Endpoint endpoint = Stubs.stub(Endpoint.class, (method, args) -> switch (method) {
                case "peer" -> peer;
                case "abort" -> aborted.complete((String) args[0]);
                default -> throw unexpected(Endpoint.class, method);
            });
            Worker local = Stubs.stub(Worker.class, (method, args) -> {
                if (method.equals("refusePeer")) {
                    refusals.incrementAndGet();
                    refused.put((UUID) args[0], (String) args[1]);
                    return null;
                }
                if (!method.equals("endpoints")) {
                    throw unexpected(Worker.class, method);
                }
                goneWhenListed.complete(view.get().gone());
                return List.of(endpoint);
            });
            directory = system.systemActorOf(Directory.create(() -> List.of(local),
                    ClusterSettings.fromConfig(system.settings().config()), view), "directory-test", Props.empty());
        }

        /** Advertises the peer as a worker of this member; returns once the directory lists it. */
        ActorRef<Advertiser.Command> advertise() throws InterruptedException {
            long incarnation = cluster.selfMember().uniqueAddress().longUid();
            ActorRef<Advertiser.Command> a = system.systemActorOf(Advertiser.create(peer, incarnation, Map.of()),
                    "advertiser-test", Props.empty());
            long until = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
            while (view.get().workers().isEmpty() && System.nanoTime() < until) {
                Thread.sleep(20);
            }
            assertEquals(peer, view.get().workers().get(0).address(), "the peer is listed");
            return a;
        }

        /** The event alone: the directory acts on it, and the member itself stays up. */
        void down() {
            directory.tell(new Directory.MemberChanged(new ClusterEvent.MemberDowned(
                    cluster.selfMember().copy(MemberStatus.down()))));
        }
    }

    private Member member() throws InterruptedException {
        system = ActorSystem.create(Behaviors.empty(), "directory-test", ClusterMember.config(null, 0));
        return new Member(ClusterMember.joinedToItself(system));
    }

    /** A stand-in's method this test does not expect the directory to call: the test fails, naming it. */
    private static AssertionError unexpected(Class<?> type, String method) {
        return new AssertionError("the directory called " + type.getSimpleName() + "." + method
                + ", which this test does not expect");
    }
}
