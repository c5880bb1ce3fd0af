package dev.fenceline.cluster;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.fenceline.Endpoint;
import dev.fenceline.Fenceline;
import dev.fenceline.Worker;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.apache.pekko.actor.typed.ActorSystem;
import org.apache.pekko.actor.typed.javadsl.Adapter;
import org.apache.pekko.actor.typed.javadsl.Behaviors;
import org.apache.pekko.cluster.ClusterEvent;
import org.apache.pekko.cluster.MemberStatus;
import org.apache.pekko.cluster.typed.Cluster;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * The shared endpoints the module gave to a gone member's workers are released once aborted, and
 * those to a worker that closed once it is withdrawn: left open, each stayed among its worker's
 * endpoints for the worker's life, counted open, and failed the worker's flush from then on.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class GoneMemberEndpointsTest {
    private ActorSystem<Void> system;
    private Cluster cluster;
    private FencelineCluster fc;
    private Worker a;
    private Worker b;
    private ClusterWorker peer;
    /** The shared endpoint from a to b, {@code a}'s only endpoint. */
    private Endpoint ep;

    @BeforeEach
    void start() throws Exception {
        system = ActorSystem.create(Behaviors.empty(), "fenceline-test", ClusterMember.config(null, 0));
        cluster = ClusterMember.joinedToItself(system);
        fc = FencelineCluster.get(system);
        a = Fenceline.get(system).newWorker("a").toCompletableFuture().get(30, TimeUnit.SECONDS);
        b = Fenceline.get(system).newWorker("b").toCompletableFuture().get(30, TimeUnit.SECONDS);
        peer = fc.advertise(b).toCompletableFuture().get(30, TimeUnit.SECONDS);
        ep = fc.connect(a, peer).toCompletableFuture().get(30, TimeUnit.SECONDS);
        assertEquals(List.of(ep), a.endpoints());
    }

    @AfterEach
    void stop() throws Exception {
        if (system != null) {
            system.terminate();
            system.getWhenTerminated().toCompletableFuture().get(30, TimeUnit.SECONDS);
        }
    }

    @Test
    void theSharedEndpointsToAGoneMembersWorkersAreClosed() throws Exception {
        // The membership event alone, as the directory gets it: this member stays up.
        Adapter.toClassic(system).actorSelection("/system/fenceline-cluster").tell(new Directory.MemberChanged(
                new ClusterEvent.MemberDowned(cluster.selfMember().copy(MemberStatus.down()))),
                org.apache.pekko.actor.ActorRef.noSender());
        long until = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
        while (!a.endpoints().isEmpty() && System.nanoTime() < until) {
            Thread.sleep(20);
        }
        assertEquals(List.of(), a.endpoints(), "released");
        assertEquals(0, a.statistics().openEndpoints(), a.statistics().toString());
        a.flush().toCompletableFuture().get(30, TimeUnit.SECONDS); // no failed endpoint left to fail it
        assertTrue(fc.connect(a, peer).toCompletableFuture().isCompletedExceptionally(), "never handed out again");
        java.util.concurrent.ExecutionException later = org.junit.jupiter.api.Assertions.assertThrows(
                java.util.concurrent.ExecutionException.class,
                () -> ep.flush().toCompletableFuture().get(30, TimeUnit.SECONDS));
        org.junit.jupiter.api.Assertions.assertInstanceOf(dev.fenceline.EndpointFailedException.class,
                later.getCause(), "a held reference still says why it failed");
        assertTrue(later.getCause().getMessage().contains("was downed"), later.getCause().getMessage());
    }

    /** A peer worker that closes while its member stays: no membership event comes, its withdrawal does. */
    @Test
    void theSharedEndpointToAWorkerThatClosedIsClosed() throws Exception {
        b.close().toCompletableFuture().get(30, TimeUnit.SECONDS);
        long until = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
        while ((!a.endpoints().isEmpty() || fc.workers().stream().anyMatch(w -> w.equals(peer)))
                && System.nanoTime() < until) {
            Thread.sleep(20);
        }
        assertTrue(fc.workers().stream().noneMatch(w -> w.equals(peer)), "withdrawn: " + fc.workers());
        assertEquals(List.of(), a.endpoints(), "the endpoint to the closed worker was released");
        a.flush().toCompletableFuture().get(30, TimeUnit.SECONDS); // no failed endpoint left to fail it
    }

    /** A shared endpoint that fails while its peer and the peer's member stay: nobody connects again. */
    @Test
    void aSharedEndpointThatFailedIsClosedWithoutWaitingForTheNextConnect() throws Exception {
        // The caller's own endpoint to the same peer fails first: the shared one stays. Listeners
        // hear an event in the order they were added, the module's (added at connect) first.
        java.util.concurrent.CompletableFuture<String> heard = new java.util.concurrent.CompletableFuture<>();
        a.addLaneEventListener(e -> {
            if (e instanceof dev.fenceline.LaneEvent.EndpointFailed f) {
                heard.complete(f.endpoint());
            }
        });
        Endpoint own = a.connect(b.address()).toCompletableFuture().get(30, TimeUnit.SECONDS);
        own.abort("the caller's own endpoint fails");
        assertEquals(own.statistics().endpoint(), heard.get(30, TimeUnit.SECONDS));
        assertTrue(fc.connect(a, peer).toCompletableFuture().get(30, TimeUnit.SECONDS) == ep, "still shared");
        own.close().toCompletableFuture().get(30, TimeUnit.SECONDS);
        ep.abort("its only lane was reset");
        long until = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
        while (!a.endpoints().isEmpty() && System.nanoTime() < until) {
            Thread.sleep(20);
        }
        assertEquals(List.of(), a.endpoints(), "released");
        a.flush().toCompletableFuture().get(30, TimeUnit.SECONDS); // no failed endpoint left to fail it
        Endpoint again = fc.connect(a, peer).toCompletableFuture().get(30, TimeUnit.SECONDS);
        assertTrue(again != ep, "a new one");
        again.flush().toCompletableFuture().get(30, TimeUnit.SECONDS);
    }
}
