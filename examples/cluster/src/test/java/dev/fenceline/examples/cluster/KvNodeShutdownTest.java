package dev.fenceline.examples.cluster;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.concurrent.TimeUnit;
import org.apache.pekko.actor.ActorSystemImpl;
import org.apache.pekko.actor.typed.ActorSystem;
import org.apache.pekko.actor.typed.Props;
import org.apache.pekko.actor.typed.javadsl.Adapter;
import org.apache.pekko.actor.typed.javadsl.Behaviors;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** A member tells a stall in Pekko's shutdown from one where Fenceline's actors are still running. */
class KvNodeShutdownTest {
    private ActorSystem<Void> system;

    @BeforeEach
    void start() {
        system = ActorSystem.create(Behaviors.empty(), "kv-tree");
    }

    @AfterEach
    void stop() throws Exception {
        system.terminate();
        system.getWhenTerminated().toCompletableFuture().get(20, TimeUnit.SECONDS);
    }

    @Test
    void aTreeWithAFencelineActorIsTheRuntimesStallNotPekkos() {
        String bare = tree(system);
        assertFalse(KvNode.holdsFencelineActors(bare), bare);
        system.systemActorOf(Behaviors.empty(), "fenceline-worker-kv-0", Props.empty());
        system.systemActorOf(Behaviors.empty(), "not-fenceline-worker", Props.empty());
        String withOurs = tree(system);
        assertTrue(withOurs.contains("not-fenceline-worker"), withOurs);
        assertTrue(KvNode.holdsFencelineActors(withOurs), withOurs);
    }

    @Test
    void anActorWhoseNameOnlyContainsFencelineIsNotOneOfOurs() {
        system.systemActorOf(Behaviors.empty(), "my-fenceline-thing", Props.empty());
        String tree = tree(system);
        assertTrue(tree.contains("my-fenceline-thing"), tree);
        assertFalse(KvNode.holdsFencelineActors(tree), tree);
    }

    /** Creating a system actor attaches it to the system guardian at once: the tree shows it. */
    private static String tree(ActorSystem<Void> system) {
        return ((ActorSystemImpl) Adapter.toClassic(system)).printTree();
    }
}
