package dev.fenceline.perf;

import com.typesafe.config.Config;
import dev.fenceline.Endpoint;
import dev.fenceline.Fenceline;
import dev.fenceline.MemoryRegion;
import dev.fenceline.RemoteKey;
import dev.fenceline.Worker;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Two workers in this JVM and everything the tests share: a region at each (so ping-pong tests can
 * poll their own memory), endpoints both ways, and active-message handlers that bounce a ping.
 * Keys travel as bytes, as between processes.
 */
final class PerfSession implements AutoCloseable {
    static final int PING = 1;
    static final int PONG = 2;
    /** A handler that only counts, for the active-message stream. */
    static final int SINK = 3;
    private static final VarHandle LONG = MethodHandles.byteBufferViewVarHandle(long[].class, ByteOrder.nativeOrder());

    final Fenceline fenceline;
    final Worker alpha;
    final Worker beta;
    final MemoryRegion atAlpha;
    final MemoryRegion atBeta;
    final RemoteKey alphaKey;
    final RemoteKey betaKey;
    final Endpoint toBeta;
    final Endpoint toAlpha;
    final String transport;
    /** Pongs that reached alpha. */
    final AtomicLong pongs = new AtomicLong();
    /** Messages the sink at beta received. */
    final AtomicLong sunk = new AtomicLong();

    PerfSession(Config config, int regionBytes) throws Exception {
        fenceline = Fenceline.create(config);
        transport = fenceline.transports().get(0);
        alpha = fenceline.newWorker("alpha").toCompletableFuture().get(30, TimeUnit.SECONDS);
        beta = fenceline.newWorker("beta").toCompletableFuture().get(30, TimeUnit.SECONDS);
        atAlpha = alpha.allocate(regionBytes);
        atBeta = beta.allocate(regionBytes);
        alphaKey = beta.unpackRemoteKey(atAlpha.remoteKey().toBytes());
        betaKey = alpha.unpackRemoteKey(atBeta.remoteKey().toBytes());
        toBeta = alpha.connect(beta.address()).toCompletableFuture().get(30, TimeUnit.SECONDS);
        toAlpha = beta.connect(alpha.address()).toCompletableFuture().get(30, TimeUnit.SECONDS);
        // A ping is answered with a pong of the same size, from the handler: no thread hop.
        beta.setActiveMessageHandler(PING, (header, payload) -> toAlpha.sendActiveMessage(PONG, header, payload));
        alpha.setActiveMessageHandler(PONG, (header, payload) -> pongs.incrementAndGet());
        beta.setActiveMessageHandler(SINK, (header, payload) -> sunk.incrementAndGet());
    }

    /** @return the 8-byte word at {@code offset} of a region, read with acquire semantics */
    static long word(MemoryRegion r, ByteBuffer view, int offset) {
        return (long) LONG.getAcquire(view, offset);
    }

    static void word(ByteBuffer b, int offset, long value) {
        LONG.set(b, offset, value);
    }

    @Override
    public void close() {
        fenceline.close();
    }
}
