package dev.fenceline.testkit.history;

import dev.fenceline.AtomicOp;
import dev.fenceline.Endpoint;
import dev.fenceline.LaneInfo;
import dev.fenceline.RemoteKey;
import dev.fenceline.WorkerAddress;
import dev.fenceline.spi.RequestTrace;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;

/**
 * An endpoint whose answers a test of the history checker scripts: its futures complete when
 * the test says, a get reads {@link #getAnswer} and a fetch returns {@link #fetchAnswer}.
 */
class ScriptedEndpoint implements Endpoint {
    final List<CompletableFuture<?>> pending = new ArrayList<>();
    final List<RequestTrace> traces = new ArrayList<>();
    long fetchAnswer;
    byte getAnswer;

    @SuppressWarnings("unchecked")
    private <T> CompletionStage<T> later() {
        CompletableFuture<T> f = new CompletableFuture<>();
        pending.add(f);
        return f;
    }

    @Override
    public CompletionStage<Void> put(ByteBuffer src, long remoteAddress, RemoteKey key) {
        return later();
    }

    @Override
    public void putImplicit(ByteBuffer src, long remoteAddress, RemoteKey key) {
        later(); // completed by the script like any other; nothing waits on it
    }

    @Override
    public void atomicPostImplicit64(AtomicOp op, long remoteAddress, RemoteKey key, long operand) {
        later();
    }

    @Override
    public CompletionStage<Void> get(ByteBuffer dst, long remoteAddress, RemoteKey key) {
        for (int i = dst.position(); i < dst.limit(); i++) {
            dst.put(i, getAnswer);
        }
        return later();
    }

    @Override
    public CompletionStage<Void> atomicPost32(AtomicOp op, long a, RemoteKey k, int v) {
        return later();
    }

    @Override
    public CompletionStage<Void> atomicPost64(AtomicOp op, long a, RemoteKey k, long v) {
        return later();
    }

    @Override
    public CompletionStage<Integer> atomicFetch32(AtomicOp op, long a, RemoteKey k, int v) {
        return CompletableFuture.completedFuture((int) fetchAnswer);
    }

    @Override
    public CompletionStage<Long> atomicFetch64(AtomicOp op, long a, RemoteKey k, long v) {
        return CompletableFuture.completedFuture(fetchAnswer);
    }

    @Override
    public CompletionStage<Integer> compareAndSwap32(long a, RemoteKey k, int e, int d) {
        return later();
    }

    @Override
    public CompletionStage<Long> compareAndSwap64(long a, RemoteKey k, long e, long d) {
        return later();
    }

    @Override
    public CompletionStage<Void> sendActiveMessage(int id, ByteBuffer h, ByteBuffer p) {
        return later();
    }

    @Override
    public void sendActiveMessageImplicit(int id, ByteBuffer h, ByteBuffer p) {
        later();
    }

    @Override
    public void fence() {
    }

    @Override
    public CompletionStage<Void> flush() {
        return later();
    }

    @Override
    public List<LaneInfo> lanes() {
        return List.of();
    }

    @Override
    public dev.fenceline.EndpointStatistics statistics() { // a script sends nothing: nothing to count
        return new dev.fenceline.EndpointStatistics("scripted", 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
                dev.fenceline.Latency.NONE, dev.fenceline.Latency.NONE, List.of());
    }

    @Override
    public WorkerAddress peer() {
        return new WorkerAddress(UUID.randomUUID(), "scripted", Map.of());
    }

    @Override
    public CompletionStage<Void> close() {
        return CompletableFuture.completedFuture(null);
    }

    @Override
    public void abort(String reason) {
        pending.forEach(f -> f.completeExceptionally(new dev.fenceline.EndpointFailedException(reason)));
    }

    @Override
    public void probeLanes() {
        // a scripted endpoint has no lanes to probe
    }

    @SuppressWarnings({"unchecked", "rawtypes"})
    void completeAll() {
        for (CompletableFuture f : pending) {
            f.complete(null);
        }
    }
}
