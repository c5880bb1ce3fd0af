package com.example.sequence;

import dev.fenceline.AtomicOp;
import dev.fenceline.Endpoint;
import dev.fenceline.Fenceline;
import dev.fenceline.MemoryRegion;
import dev.fenceline.RemoteKey;
import dev.fenceline.Worker;
import dev.fenceline.WorkerAddress;
import java.util.concurrent.CompletionStage;
import org.apache.pekko.actor.typed.ActorSystem;

/**
 * Unique numbers for a cluster: one node hosts an 8-byte counter, every node (the host too) takes
 * the next number with one remote fetch-and-add. Runs inside the service's own actor system.
 */
public final class SequenceService implements AutoCloseable {
    private final Worker worker;
    private MemoryRegion counter;

    private SequenceService(Worker worker) {
        this.worker = worker;
    }

    /**
     * @param system the service's actor system; Fenceline runs on it as an extension
     * @param name this node's name
     * @return the node's service, once its worker is up
     */
    public static CompletionStage<SequenceService> start(ActorSystem<?> system, String name) {
        return Fenceline.get(system).newWorker(name).thenApply(SequenceService::new);
    }

    /** @return this node's address, for the other nodes to connect to */
    public WorkerAddress address() {
        return worker.address();
    }

    /**
     * Makes this node the host of the counter.
     *
     * @return the counter's packed remote key, for the other nodes
     */
    public byte[] hostCounter() {
        counter = worker.allocate(8);
        return counter.remoteKey().toBytes();
    }

    /** @return the counter's address at the host, for the other nodes */
    public long counterAddress() {
        return counter.address();
    }

    /**
     * @param host the host's address
     * @param counterAddress where its counter is
     * @param packedKey its packed remote key
     * @return a handle that takes numbers from that host's counter
     */
    public CompletionStage<Sequence> connect(WorkerAddress host, long counterAddress, byte[] packedKey) {
        RemoteKey key = worker.unpackRemoteKey(packedKey);
        return worker.connect(host).thenApply(ep -> new Sequence(ep, counterAddress, key));
    }

    /** Takes numbers from one host's counter. */
    public static final class Sequence {
        private final Endpoint endpoint;
        private final long address;
        private final RemoteKey key;

        private Sequence(Endpoint endpoint, long address, RemoteKey key) {
            this.endpoint = endpoint;
            this.address = address;
            this.key = key;
        }

        /** @return the next number: never one that any node got before */
        public CompletionStage<Long> next() {
            return endpoint.atomicFetch64(AtomicOp.ADD, address, key, 1);
        }

        /**
         * @param n how many numbers
         * @return the first of n consecutive numbers that are this caller's alone
         */
        public CompletionStage<Long> reserve(int n) {
            if (n < 1) {
                throw new IllegalArgumentException("reserve " + n + " numbers: expected at least 1");
            }
            return endpoint.atomicFetch64(AtomicOp.ADD, address, key, n);
        }

        /** @return the endpoint underneath, for tests */
        public Endpoint endpoint() {
            return endpoint;
        }
    }

    @Override
    public void close() {
        worker.close().toCompletableFuture().join();
    }
}
