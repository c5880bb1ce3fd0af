package dev.fenceline.cluster;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.fenceline.Endpoint;
import dev.fenceline.EndpointFailedException;
import dev.fenceline.Fenceline;
import dev.fenceline.FencelineException;
import dev.fenceline.Worker;
import dev.fenceline.WorkerAddress;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.apache.pekko.actor.typed.ActorSystem;
import org.apache.pekko.actor.typed.javadsl.Adapter;
import org.apache.pekko.actor.typed.javadsl.Behaviors;
import org.apache.pekko.cluster.ClusterEvent;
import org.apache.pekko.cluster.MemberStatus;
import org.apache.pekko.cluster.typed.Cluster;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * What a caller of the module gets when things end under it: a connect whose peer's member goes
 * while the endpoint is being made fails as a connect to a gone member does (it completed with the
 * aborted endpoint), and an ask answered after the dispatcher shut down still completes.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class ConnectWhileGoneTest {
    @Test
    void aConnectWhosePeersMemberGoesMeanwhileFails() throws Exception {
        ActorSystem<Void> system = ActorSystem.create(Behaviors.empty(), "fenceline-test", ClusterMember.config(null, 0));
        try {
            Cluster cluster = ClusterMember.joinedToItself(system);
            FencelineCluster fc = FencelineCluster.get(system);
            Worker b = Fenceline.get(system).newWorker("b").toCompletableFuture().get(30, TimeUnit.SECONDS);
            ClusterWorker peer = fc.advertise(b).toCompletableFuture().get(30, TimeUnit.SECONDS);
            CompletableFuture<Endpoint> connecting = new CompletableFuture<>();
            CompletionStage<Endpoint> stage = fc.connect(local(connecting), peer);

            Adapter.toClassic(system).actorSelection("/system/fenceline-cluster").tell(new Directory.MemberChanged(
                    new ClusterEvent.MemberDowned(cluster.selfMember().copy(MemberStatus.down()))),
                    org.apache.pekko.actor.ActorRef.noSender());
            Worker other = local(new CompletableFuture<>());
            long until = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
            while (!fc.connect(other, peer).toCompletableFuture().isCompletedExceptionally()
                    && System.nanoTime() < until) {
                Thread.sleep(20); // until the directory published the member gone
            }
            assertTrue(fc.connect(other, peer).toCompletableFuture().isCompletedExceptionally(), "the member is gone");

            CompletableFuture<String> aborted = new CompletableFuture<>();
            connecting.complete(endpoint(aborted)); // the wireup completes only now
            ExecutionException e = assertThrows(ExecutionException.class,
                    () -> stage.toCompletableFuture().get(30, TimeUnit.SECONDS));
            assertInstanceOf(EndpointFailedException.class, e.getCause(), "no aborted endpoint handed out");
            assertTrue(e.getCause().getMessage().contains("gone"), e.getCause().getMessage());
            assertTrue(aborted.get(30, TimeUnit.SECONDS).contains("is gone"), "and the endpoint made is aborted");
        } finally {
            system.terminate();
            system.getWhenTerminated().toCompletableFuture().get(30, TimeUnit.SECONDS);
        }
    }

    @Test
    void anAnswerTheDispatcherCannotTakeStillCompletesTheAsk() throws Exception {
        RejectedExecutionException shutDown = new RejectedExecutionException("dispatcher shut down");
        CompletableFuture<String> answer = new CompletableFuture<>();
        CompletionStage<String> relayed = FencelineCluster.relayed(answer, task -> {
            throw shutDown;
        }, () -> "no answer");
        answer.completeExceptionally(new TimeoutException("ask timed out"));
        ExecutionException e = assertThrows(ExecutionException.class,
                () -> relayed.toCompletableFuture().get(10, TimeUnit.SECONDS));
        assertEquals(shutDown, e.getCause() instanceof java.util.concurrent.CompletionException
                ? e.getCause().getCause() : e.getCause());

        CompletableFuture<String> inTime = new CompletableFuture<>(); // and with a dispatcher, as before
        CompletionStage<String> ok = FencelineCluster.relayed(inTime, Runnable::run, () -> "no answer");
        inTime.completeExceptionally(new TimeoutException("ask timed out"));
        e = assertThrows(ExecutionException.class, () -> ok.toCompletableFuture().get(10, TimeUnit.SECONDS));
        assertInstanceOf(FencelineException.class, e.getCause());
        assertEquals("no answer", e.getCause().getMessage());
    }

    /** A worker of this member whose connect completes when the test says. */
    private static Worker local(CompletableFuture<Endpoint> connect) {
        WorkerAddress address = new WorkerAddress(UUID.randomUUID(), "local", Map.of());
        return Stubs.stub(Worker.class, (method, args) -> switch (method) {
            case "address" -> address;
            case "whenClosed" -> new CompletableFuture<Void>();
            case "connect" -> connect;
            case "addLaneEventListener" -> (AutoCloseable) () -> { }; // the module watches for endpoint failures
            default -> throw new AssertionError("the module called Worker." + method + ", not expected here");
        });
    }

    /** An endpoint that records its abort, and flushes and closes at once. */
    private static Endpoint endpoint(CompletableFuture<String> aborted) {
        return Stubs.stub(Endpoint.class, (method, args) -> switch (method) {
            case "abort" -> aborted.complete((String) args[0]);
            case "flush", "close" -> CompletableFuture.completedFuture(null);
            default -> throw new AssertionError("the module called Endpoint." + method + ", not expected here");
        });
    }
}
