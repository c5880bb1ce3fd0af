package dev.fenceline.testkit.sim;

import dev.fenceline.EndpointFailedException;
import dev.fenceline.spi.LaneConnection;
import dev.fenceline.spi.RemoteAccessTarget;
import dev.fenceline.spi.Transport;
import dev.fenceline.spi.TransportContext;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;

/** One worker's sim transport: its fabric thread and the lanes its endpoints open. */
final class SimTransport implements Transport {
    /** Every open sim transport in this JVM, so workers of different runtimes can connect. */
    private static final Map<UUID, SimTransport> REGISTRY = new ConcurrentHashMap<>();

    private final TransportContext context;
    private final SimSettings settings;
    private final SimFabric fabric;
    private final AtomicInteger connections = new AtomicInteger();
    private volatile RemoteAccessTarget target;

    SimTransport(TransportContext context, SimSettings settings) {
        this.context = context;
        this.settings = settings;
        this.target = context.target();
        this.fabric = new SimFabric("fenceline-sim-" + context.workerName());
        REGISTRY.put(context.workerId(), this);
    }

    RemoteAccessTarget target() {
        return target;
    }

    String workerName() {
        return context.workerName();
    }

    @Override
    public String name() {
        return SimTransportProvider.NAME;
    }

    @Override
    public byte[] localAddress() {
        UUID id = context.workerId();
        return ByteBuffer.allocate(16).putLong(id.getMostSignificantBits()).putLong(id.getLeastSignificantBits())
                .array();
    }

    @Override
    public CompletionStage<List<LaneConnection>> connect(UUID peerId, byte[] peerAddress) {
        SimTransport peer = REGISTRY.get(peerId);
        if (peer == null || peerAddress == null || peerAddress.length != 16) {
            return CompletableFuture.failedFuture(new EndpointFailedException(
                    "sim: no open worker " + peerId + " in this JVM"));
        }
        int connection = connections.incrementAndGet();
        List<LaneConnection> lanes = new ArrayList<>();
        for (int i = 0; i < settings.lanes().size(); i++) {
            long seed = settings.seed() * 1_000_003L + connection * 131L + i;
            lanes.add(new SimLane(i, settings.lanes().get(i), fabric, peer, seed, settings.maxFragment(),
                    settings.queueDepth()));
        }
        return CompletableFuture.completedFuture(List.copyOf(lanes));
    }

    @Override
    public void close() {
        REGISTRY.remove(context.workerId(), this);
        target = null;
        fabric.close();
    }
}
