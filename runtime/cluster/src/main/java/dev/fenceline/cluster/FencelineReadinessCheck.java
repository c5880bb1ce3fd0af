package dev.fenceline.cluster;

import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.function.Supplier;
import org.apache.pekko.actor.ActorSystem;
import org.apache.pekko.actor.typed.javadsl.Adapter;

/**
 * A readiness check for Pekko Management's health checks, which constructs it with the actor
 * system: {@code pekko.management.health-checks.readiness-checks.fenceline =
 * "dev.fenceline.cluster.FencelineReadinessCheck"}. Ready is {@link FencelineCluster#isReady()}.
 */
public final class FencelineReadinessCheck implements Supplier<CompletionStage<Boolean>> {
    private final FencelineCluster cluster;

    /** @param system the actor system (Pekko Management passes it) */
    public FencelineReadinessCheck(ActorSystem system) {
        this.cluster = FencelineCluster.get(Adapter.toTyped(system));
    }

    @Override
    public CompletionStage<Boolean> get() {
        return CompletableFuture.completedFuture(cluster.isReady());
    }
}
