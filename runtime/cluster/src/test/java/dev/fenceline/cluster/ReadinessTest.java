package dev.fenceline.cluster;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.fenceline.Fenceline;
import dev.fenceline.Worker;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import org.apache.pekko.actor.typed.ActorSystem;
import org.apache.pekko.actor.typed.javadsl.Adapter;
import org.apache.pekko.actor.typed.javadsl.Behaviors;
import org.apache.pekko.cluster.MemberStatus;
import org.apache.pekko.cluster.typed.Cluster;
import org.apache.pekko.cluster.typed.Join;
import org.apache.pekko.management.javadsl.PekkoManagement;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** Pekko Management's /ready route includes Fenceline's check, bound by the module's reference.conf. */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class ReadinessTest {
    private static int status(HttpClient http, String uri) throws Exception {
        return http.send(HttpRequest.newBuilder(URI.create(uri)).timeout(Duration.ofSeconds(10)).build(),
                HttpResponse.BodyHandlers.discarding()).statusCode();
    }

    @Test
    void readyOnceTheMemberIsUpAndItsWorkersAreListed() throws Exception {
        ActorSystem<Void> system = ActorSystem.create(Behaviors.empty(), "fenceline-test",
                ClusterMember.config(null, 0).withFallback(com.typesafe.config.ConfigFactory.parseString(
                        "pekko.management.http.hostname = 127.0.0.1\npekko.management.http.port = 0")));
        try {
            String base = PekkoManagement.get(Adapter.toClassic(system)).start().toCompletableFuture()
                    .get(30, TimeUnit.SECONDS).toString();
            HttpClient http = HttpClient.newHttpClient();
            FencelineCluster cluster = FencelineCluster.get(system);
            assertFalse(cluster.isReady(), "not a member yet");
            assertEquals(500, status(http, base + "/ready"), "management says not ready while Fenceline is not");

            Cluster.get(system).manager().tell(Join.create(Cluster.get(system).selfMember().address()));
            long until = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
            while (Cluster.get(system).selfMember().status() != MemberStatus.up() && System.nanoTime() < until) {
                Thread.sleep(20); // the test's thread, not an actor
            }
            Worker w = Fenceline.get(system).newWorker("w").toCompletableFuture().get(30, TimeUnit.SECONDS);
            cluster.advertise(w).toCompletableFuture().get(30, TimeUnit.SECONDS);
            assertTrue(cluster.isReady(), "up, and the worker is listed");
            assertEquals(200, status(http, base + "/ready"));
        } finally {
            system.terminate();
            system.getWhenTerminated().toCompletableFuture().get(30, TimeUnit.SECONDS);
        }
    }
}
