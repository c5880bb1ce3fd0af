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
    /** The target worker when it is in this JVM, else null. */
    final Worker beta;
    /** The target when it is another JVM, else null. */
    private final Peer target;
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
        target = null;
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
        // A ping is answered with a pong of the same size, from the handler: no thread hop. Implicit,
        // so the handler's buffers are copied before it returns; the runs flush toAlpha at the end.
        beta.setActiveMessageHandler(PING, (header, payload) -> toAlpha.sendActiveMessageImplicit(PONG, header,
                payload));
        alpha.setActiveMessageHandler(PONG, (header, payload) -> pongs.incrementAndGet());
        beta.setActiveMessageHandler(SINK, (header, payload) -> sunk.incrementAndGet());
    }

    /**
     * The other side of a two-process run: a {@link PerfTarget} at the end of a line protocol (a
     * child's stdin/stdout, or a control connection to {@code fenceline perf --server}).
     *
     * @param in its lines
     * @param out lines to it
     * @param ready called once set up (set-up time limits give way to the run's)
     * @param end closes our side and waits for it to finish
     */
    record Peer(java.io.InputStream in, java.io.OutputStream out, PerfTarget.SetUp ready, End end) {
        /** Closes the driver's side and waits for the target to finish. */
        interface End {
            void close() throws java.io.IOException;
        }
    }

    /**
     * The target worker runs on the other side of {@code peer}: it allocates the region we ask
     * for, tells its address and region key, and connects back to answer pings. On any failure the
     * runtime and the peer are closed before the exception leaves.
     */
    PerfSession(Config config, int regionBytes, Peer peer) throws Exception {
        this.target = peer;
        Fenceline started = null;
        try {
            java.io.OutputStream out = peer.out();
            out.write(("REGION " + regionBytes + "\n").getBytes(java.nio.charset.StandardCharsets.US_ASCII));
            out.flush();
            String[] line = PerfTarget.expect(peer.in(), "ADDRESS ").split(" ");
            if (line.length != 3) {
                throw new java.io.IOException("the target's ADDRESS line has " + line.length + " fields, not 3");
            }
            java.util.HexFormat hex = java.util.HexFormat.of();
            started = Fenceline.create(config);
            fenceline = started;
            transport = fenceline.transports().get(0);
            alpha = fenceline.newWorker("alpha").toCompletableFuture().get(30, TimeUnit.SECONDS);
            beta = null;
            atAlpha = alpha.allocate(regionBytes);
            alphaKey = null;
            betaKey = alpha.unpackRemoteKey(hex.parseHex(line[2]));
            toBeta = alpha.connect(dev.fenceline.WorkerAddress.fromBytes(hex.parseHex(line[1])))
                    .toCompletableFuture().get(30, TimeUnit.SECONDS);
            atBeta = new dev.fenceline.testkit.RemoteRegion(toBeta, betaKey, java.time.Duration.ofSeconds(60));
            toAlpha = null;
            alpha.setActiveMessageHandler(PONG, (header, payload) -> pongs.incrementAndGet());
            out.write(("PEER " + hex.formatHex(alpha.address().toBytes()) + "\n").getBytes(
                    java.nio.charset.StandardCharsets.US_ASCII));
            out.flush();
            PerfTarget.expect(peer.in(), "READY");
            peer.ready().done();
        } catch (Exception | Error e) {
            try {
                if (started != null) {
                    started.close();
                }
            } finally {
                peer.end().close();
            }
            throw e;
        }
    }

    /** @return the compile times to wait for after a warm-up: this JVM's, and the target's if it has its own */
    java.util.List<JitSettle.CompileTime> compilers() {
        return target == null ? java.util.List.of(JitSettle.thisJvm())
                : java.util.List.of(JitSettle.thisJvm(), this::targetCompileMillis);
    }

    /** Asks the target process for its compile time (a line each way on the control channel). */
    private long targetCompileMillis() throws java.io.IOException {
        target.out().write("JIT\n".getBytes(java.nio.charset.StandardCharsets.US_ASCII));
        target.out().flush();
        String said = fromTarget("JIT ").substring(4).trim();
        try {
            return Long.parseLong(said);
        } catch (NumberFormatException e) {
            throw new java.io.IOException("the target's compile time reads '" + said + "'", e);
        }
    }

    /**
     * Set once a wait for the target's answer ended without one (timed out, or interrupted): closing
     * asks it nothing more.
     */
    private boolean targetSilent;

    /** Reads the target's answer, a line starting with {@code prefix}; notes a read that timed out. */
    private String fromTarget(String prefix) throws java.io.IOException {
        try {
            return PerfTarget.expect(target.in(), prefix);
        } catch (java.io.InterruptedIOException e) { // a socket's timeout, a pipe's (BoundedPipe), an interrupt
            targetSilent = true;
            throw e;
        }
    }

    /** @return whether the target worker is in another process */
    boolean remote() {
        return target != null;
    }

    /** @return the 8-byte word at {@code offset} of a region's view, read with acquire semantics */
    static long word(ByteBuffer view, int offset) {
        return (long) LONG.getAcquire(view, offset);
    }

    static void word(ByteBuffer b, int offset, long value) {
        LONG.set(b, offset, value);
    }

    @Override
    public void close() throws java.io.IOException {
        try {
            if (target != null && !targetSilent) { // it flushes its pongs while this worker still answers them
                target.out().write("DONE\n".getBytes(java.nio.charset.StandardCharsets.US_ASCII));
                target.out().flush();
                String said = fromTarget("FLUSH");
                if (!said.equals("FLUSHED")) {
                    throw new java.io.IOException("the target: " + said);
                }
            }
        } finally {
            try {
                fenceline.close();
            } finally {
                if (target != null) {
                    target.end().close(); // the target serves until our side closes
                }
            }
        }
    }
}
