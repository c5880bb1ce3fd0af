package dev.fenceline.examples.testing;

import dev.fenceline.AtomicOp;
import dev.fenceline.Endpoint;
import dev.fenceline.RemoteKey;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;

/**
 * A counter kept on several replica workers. Increments are posted ADDs to every replica; a read
 * fetches replica 0's value, after a fence, so it sees every increment this instance made before it.
 * Built only on Fenceline's public API.
 */
public final class ReplicatedCounter {
    /**
     * Where one replica keeps the counter.
     *
     * @param endpoint the endpoint to the replica's worker
     * @param address the counter word's address there
     * @param key the key of the region that holds it
     */
    public record Replica(Endpoint endpoint, long address, RemoteKey key) {
    }

    /** Deliberate bugs, for proving that tests catch them. */
    public enum Bug {
        /** Correct. */
        NONE,
        /** Reads without the fence. */
        READ_WITHOUT_FENCE,
        /** Sends every increment twice ("retry on a slow ack"). */
        RETRY_INCREMENTS
    }

    private final List<Replica> replicas;
    private final Bug bug;

    /**
     * @param replicas the replicas; reads go to the first
     * @param bug a deliberate bug, or {@link Bug#NONE}
     */
    public ReplicatedCounter(List<Replica> replicas, Bug bug) {
        if (replicas.isEmpty()) {
            throw new IllegalArgumentException("a replicated counter needs at least one replica");
        }
        this.replicas = List.copyOf(replicas);
        this.bug = bug;
    }

    /**
     * @param delta a non-negative amount
     * @return completes when every replica applied it
     */
    public CompletionStage<Void> increment(long delta) {
        CompletableFuture<?>[] all = new CompletableFuture<?>[replicas.size() * (bug == Bug.RETRY_INCREMENTS ? 2 : 1)];
        int i = 0;
        for (Replica r : replicas) {
            all[i++] = r.endpoint().atomicPost64(AtomicOp.ADD, r.address(), r.key(), delta).toCompletableFuture();
            if (bug == Bug.RETRY_INCREMENTS) {
                all[i++] = r.endpoint().atomicPost64(AtomicOp.ADD, r.address(), r.key(), delta).toCompletableFuture();
            }
        }
        return CompletableFuture.allOf(all);
    }

    /** @return replica 0's value, including every increment issued before this read */
    public CompletionStage<Long> read() {
        Replica r = replicas.get(0);
        if (bug != Bug.READ_WITHOUT_FENCE) {
            r.endpoint().fence();
        }
        return r.endpoint().atomicFetch64(AtomicOp.ADD, r.address(), r.key(), 0);
    }
}
