package dev.fenceline.cluster;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.typesafe.config.Config;
import com.typesafe.config.ConfigFactory;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import org.apache.pekko.Done;
import org.apache.pekko.actor.CoordinatedShutdown;
import org.apache.pekko.actor.typed.ActorSystem;
import org.apache.pekko.actor.typed.javadsl.Adapter;
import org.apache.pekko.actor.typed.javadsl.Behaviors;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * The cluster directory is a system actor, which Pekko stops only after its remoting ended; where
 * remoting never ends (Pekko 1.7, a TLS association to a killed member) it would outlive the
 * system's termination. It stops before the actor system terminates: a phase of the test's own,
 * between the two, finds it gone.
 */
@Timeout(value = 90, unit = TimeUnit.SECONDS)
class DirectoryShutdownTest {
    private static String tree(ActorSystem<?> system) {
        return ((org.apache.pekko.actor.ActorSystemImpl) Adapter.toClassic(system)).printTree();
    }

    @Test
    void theDirectoryIsGoneBeforeTheActorSystemTerminates() throws Exception {
        Config c = ConfigFactory.parseString("""
                pekko.coordinated-shutdown.phases {
                  fenceline-test-check { depends-on = [before-actor-system-terminate] }
                  actor-system-terminate { depends-on = [fenceline-test-check] }
                }
                """).withFallback(ClusterMember.config(null, 0));
        ActorSystem<Void> system = ActorSystem.create(Behaviors.empty(), "directory-shutdown", c);
        AtomicReference<String> atCheck = new AtomicReference<>();
        try {
            ClusterMember.joinedToItself(system);
            FencelineCluster.get(system);
            assertTrue(tree(system).contains("-> fenceline-cluster"), "the directory runs: " + tree(system));
            CoordinatedShutdown.get(system).addTask("fenceline-test-check", "look-for-the-directory",
                    () -> CompletableFuture.supplyAsync(() -> {
                        String t = tree(system);
                        long until = System.nanoTime() + TimeUnit.SECONDS.toNanos(5);
                        while (t.contains("-> fenceline-cluster") && System.nanoTime() < until) {
                            Thread.onSpinWait(); // a pool thread of the test's, not an actor
                            t = tree(system);
                        }
                        atCheck.set(t);
                        return Done.getInstance();
                    }));
        } finally {
            system.terminate();
            system.getWhenTerminated().toCompletableFuture().get(60, TimeUnit.SECONDS);
        }
        assertNotNull(atCheck.get(), "the test's phase ran");
        assertFalse(atCheck.get().contains("-> fenceline-cluster"), "still running: " + atCheck.get());
    }
}
