package dev.fenceline.jucx;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.Locale;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import org.HdrHistogram.Histogram;
import org.openucx.jucx.UcxCallback;
import org.openucx.jucx.UcxUtils;
import org.openucx.jucx.ucp.UcpAmData;
import org.openucx.jucx.ucp.UcpContext;
import org.openucx.jucx.ucp.UcpEndpoint;
import org.openucx.jucx.ucp.UcpEndpointParams;
import org.openucx.jucx.ucp.UcpMemMapParams;
import org.openucx.jucx.ucp.UcpMemory;
import org.openucx.jucx.ucp.UcpParams;
import org.openucx.jucx.ucp.UcpRemoteKey;
import org.openucx.jucx.ucp.UcpRequest;
import org.openucx.jucx.ucp.UcpWorker;
import org.openucx.jucx.ucp.UcpWorkerParams;
import org.openucx.jucx.ucs.UcsConstants;

/**
 * The rows of {@code bin/compare-ucx} that JUCX, UCX's own Java binding, can run, measured the way
 * {@code fenceline perf} measures them, so the table has a Java reference beside ucx_perftest. Two
 * UCX contexts and workers live in this JVM: alpha drives from the calling thread, beta (the target)
 * is progressed by a thread of its own. Memory is mapped by UCX ({@code memoryMap(allocate)}), so on
 * shared memory a put is a store into the peer's mapping. Transports come from {@code UCX_TLS}.
 * JUCX has no atomic operations, so fetch-add rows have no JUCX figure.
 *
 * <p>{@code JucxPerf TEST SIZE ITERATIONS WARMUP [WINDOW]} prints {@code RESULT TEST VALUE}: msg/s
 * for 8-byte streams, MB/s (10^6 B/s) for larger ones, µs one way (p50) for ping-pongs. Tests:
 * {@code put_bw} (a request per put, WINDOW in flight), {@code put_bw_implicit} (implicit puts, a
 * flush every WINDOW), {@code put_lat} and {@code am_lat}.
 */
public final class JucxPerf implements AutoCloseable {
    private static final int PING = 1;
    private static final int PONG = 2;
    private static final long TIMEOUT_NANOS = TimeUnit.SECONDS.toNanos(120);

    private final UcpContext alphaContext;
    private final UcpContext betaContext;
    private final UcpWorker alpha;
    private final UcpWorker beta;
    private final UcpEndpoint toBeta;
    private final UcpEndpoint toAlpha;
    private final UcpMemory atAlpha;
    private final UcpMemory atBeta;
    private final UcpMemory source;
    private final UcpRemoteKey alphaKey;
    private final UcpRemoteKey betaKey;
    private final AtomicReference<String> failure = new AtomicReference<>();
    private final UcxCallback failOnly = new UcxCallback() {
        @Override
        public void onError(int status, String message) {
            failure.compareAndSet(null, "UCX status " + status + ": " + message);
        }
    };

    /** @param bytes the size of each side's region and of the source buffer */
    JucxPerf(long bytes) throws Exception {
        UcpParams params = new UcpParams().requestRmaFeature().requestAmFeature();
        alphaContext = new UcpContext(params);
        betaContext = new UcpContext(params);
        alpha = alphaContext.newWorker(new UcpWorkerParams());
        beta = betaContext.newWorker(new UcpWorkerParams());
        toBeta = alpha.newEndpoint(new UcpEndpointParams().setUcpAddress(beta.getAddress()));
        toAlpha = beta.newEndpoint(new UcpEndpointParams().setUcpAddress(alpha.getAddress()));
        atAlpha = alphaContext.memoryMap(new UcpMemMapParams().allocate().setLength(bytes));
        atBeta = betaContext.memoryMap(new UcpMemMapParams().allocate().setLength(bytes));
        source = alphaContext.memoryMap(new UcpMemMapParams().allocate().setLength(bytes));
        betaKey = toBeta.unpackRemoteKey(atBeta.getRemoteKeyBuffer());
        alphaKey = toAlpha.unpackRemoteKey(atAlpha.getRemoteKeyBuffer());
    }

    /** Beta's side of a test: runs on its own thread, progressing beta, until stopped. */
    private final class Target extends Thread {
        private final Runnable step;
        private volatile boolean stop;
        private volatile Throwable error;

        Target(Runnable step) {
            super("jucx-beta");
            setDaemon(true);
            this.step = step;
        }

        @Override
        public void run() {
            try {
                while (!stop) {
                    beta.progress();
                    step.run();
                }
            } catch (Throwable t) {
                error = t;
            }
        }

        void finish() throws Exception {
            stop = true;
            join(TimeUnit.SECONDS.toMillis(10));
            if (error != null) {
                throw new IllegalStateException("beta's thread failed", error);
            }
        }
    }

    private void check(long deadline, String what) {
        if (failure.get() != null) {
            throw new IllegalStateException(what + ": " + failure.get());
        }
        if (System.nanoTime() - deadline > 0) {
            throw new IllegalStateException(what + " stalled");
        }
    }

    private void flush() throws Exception {
        UcpRequest r = toBeta.flushNonBlocking(failOnly);
        alpha.progressRequest(r);
    }

    /** @return operations per second */
    double putStream(int size, int n, int window, boolean implicit) throws Exception {
        long src = source.getAddress();
        long dst = atBeta.getAddress();
        long[] outstanding = new long[1];
        UcxCallback done = new UcxCallback() {
            @Override
            public void onSuccess(UcpRequest request) {
                outstanding[0]--;
            }

            @Override
            public void onError(int status, String message) {
                outstanding[0]--;
                failOnly.onError(status, message);
            }
        };
        Target target = new Target(() -> { });
        target.start();
        try {
            long deadline = System.nanoTime() + TIMEOUT_NANOS;
            long start = System.nanoTime();
            for (int i = 1; i <= n; i++) {
                if (implicit) {
                    toBeta.putNonBlockingImplicit(src, size, dst, betaKey);
                    if (i % window == 0) {
                        flush();
                    }
                } else {
                    while (outstanding[0] >= window) {
                        alpha.progress();
                        check(deadline, "put_bw");
                    }
                    outstanding[0]++;
                    toBeta.putNonBlocking(src, size, dst, betaKey, done);
                }
            }
            flush();
            while (outstanding[0] > 0) {
                alpha.progress();
                check(deadline, "put_bw");
            }
            check(deadline, "put_bw");
            return n / ((System.nanoTime() - start) / 1e9);
        } finally {
            target.finish();
        }
    }

    /** @return the one-way latency's median in µs: alpha puts a number into beta, beta puts it back */
    double putPingPong(int n) throws Exception {
        ByteBuffer alphaView = UcxUtils.getByteBufferView(atAlpha.getAddress(), 8).order(ByteOrder.nativeOrder());
        ByteBuffer betaView = UcxUtils.getByteBufferView(atBeta.getAddress(), 8).order(ByteOrder.nativeOrder());
        ByteBuffer ping = ByteBuffer.allocateDirect(8).order(ByteOrder.nativeOrder());
        ByteBuffer pong = ByteBuffer.allocateDirect(8).order(ByteOrder.nativeOrder());
        long base = alphaView.getLong(0);
        long[] answered = {base};
        Target target = new Target(() -> {
            long seen = betaView.getLong(0);
            if (seen > answered[0]) {
                answered[0] = seen;
                pong.putLong(0, seen);
                toAlpha.putNonBlockingImplicit(UcxUtils.getAddress(pong), 8, atAlpha.getAddress(), alphaKey);
            }
        });
        target.start();
        try {
            Histogram h = new Histogram(TimeUnit.SECONDS.toNanos(60), 3);
            long deadline = System.nanoTime() + TIMEOUT_NANOS;
            for (long i = base + 1; i <= base + n; i++) {
                long t0 = System.nanoTime();
                ping.putLong(0, i);
                toBeta.putNonBlockingImplicit(UcxUtils.getAddress(ping), 8, atBeta.getAddress(), betaKey);
                while (alphaView.getLong(0) < i) {
                    alpha.progress();
                    check(deadline, "put_lat");
                }
                h.recordValue((System.nanoTime() - t0) / 2);
            }
            return h.getValueAtPercentile(50) / 1000.0;
        } finally {
            target.finish();
        }
    }

    /** @return the one-way latency's median in µs: beta answers every ping with a pong of the same size */
    double amPingPong(int size, int n) throws Exception {
        long data = source.getAddress();
        long[] pings = {0};
        long[] pongsSent = {0};
        long[] pongs = {0};
        int ok = UcsConstants.STATUS.UCS_OK;
        beta.setAmRecvHandler(PING, (header, headerSize, amData, replyEp) -> {
            pings[0]++;
            return ok;
        });
        alpha.setAmRecvHandler(PONG, (header, headerSize, amData, replyEp) -> {
            pongs[0]++;
            return ok;
        });
        long betaData = atBeta.getAddress();
        // Like ucx_perftest, the answer goes out from beta's progress loop, not from inside the handler.
        Target target = new Target(() -> {
            if (pings[0] > pongsSent[0]) {
                pongsSent[0]++;
                toAlpha.sendAmNonBlocking(PONG, 0, 0, betaData, size, 0, failOnly);
            }
        });
        target.start();
        try {
            Histogram h = new Histogram(TimeUnit.SECONDS.toNanos(60), 3);
            long deadline = System.nanoTime() + TIMEOUT_NANOS;
            for (long i = 1; i <= n; i++) {
                long t0 = System.nanoTime();
                toBeta.sendAmNonBlocking(PING, 0, 0, data, size, 0, failOnly);
                while (pongs[0] < i) {
                    alpha.progress();
                    check(deadline, "am_lat");
                }
                h.recordValue((System.nanoTime() - t0) / 2);
            }
            return h.getValueAtPercentile(50) / 1000.0;
        } finally {
            target.finish();
        }
    }

    /**
     * Tears down without waiting on the peer: a blocking endpoint close over tcp waits for the other
     * worker, which nothing progresses any more (measured: it spun for minutes). Both endpoints are
     * closed (after a flush; a forced close needs error handling, which shared memory refuses) while
     * this thread progresses both workers, for at most five seconds.
     */
    @Override
    public void close() {
        alphaKey.close();
        betaKey.close();
        UcpRequest a = toBeta.closeNonBlockingFlush();
        UcpRequest b = toAlpha.closeNonBlockingFlush();
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(5);
        try {
            while (!(a.isCompleted() && b.isCompleted()) && deadline - System.nanoTime() > 0) {
                alpha.progress();
                beta.progress();
            }
        } catch (Exception e) {
            failure.compareAndSet(null, "closing the endpoints: " + e);
        }
        source.close();
        atAlpha.close();
        atBeta.close();
        alpha.close();
        beta.close();
        alphaContext.close();
        betaContext.close();
    }

    private double run(String test, int size, int n, int window) throws Exception {
        return switch (test) {
            case "put_bw" -> rateOrBandwidth(putStream(size, n, window, false), size);
            case "put_bw_implicit" -> rateOrBandwidth(putStream(size, n, window, true), size);
            case "put_lat" -> putPingPong(n);
            case "am_lat" -> amPingPong(size, n);
            default -> throw new IllegalArgumentException("unknown test " + test
                    + ": put_bw, put_bw_implicit, put_lat or am_lat");
        };
    }

    /** A pass of warm-up: {@code n} operations of the test, none if {@code n} is 0. */
    private void warm(String test, int size, int n, int window) throws Exception {
        if (n > 0) {
            run(test, size, n, window);
        }
    }

    private static double rateOrBandwidth(double opsPerSecond, int size) {
        return size <= 8 ? opsPerSecond : opsPerSecond * size / 1e6;
    }

    /**
     * Waits, at most 3 s, until the JIT has compiled nothing for 200 ms (the bounds of Fenceline's perf
     * tool's wait, by default): a short run measured while C2 still compiles shares two cores with it.
     */
    private static void awaitCompilers() throws InterruptedException {
        java.lang.management.CompilationMXBean jit = java.lang.management.ManagementFactory.getCompilationMXBean();
        if (jit == null || !jit.isCompilationTimeMonitoringSupported()) {
            return;
        }
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(3);
        long seen = jit.getTotalCompilationTime();
        long quietSince = System.nanoTime();
        while (System.nanoTime() - deadline < 0 && System.nanoTime() - quietSince < TimeUnit.MILLISECONDS.toNanos(200)) {
            Thread.sleep(20);
            long now = jit.getTotalCompilationTime();
            if (now != seen) {
                seen = now;
                quietSince = System.nanoTime();
            }
        }
    }

    /**
     * @param args TEST SIZE ITERATIONS WARMUP [WINDOW]
     * @throws Exception if UCX fails or a test stalls
     */
    public static void main(String[] args) throws Exception {
        if (args.length < 4) {
            System.err.println("usage: JucxPerf TEST SIZE ITERATIONS WARMUP [WINDOW]");
            System.exit(2);
        }
        String test = args[0];
        int size = Integer.parseInt(args[1]);
        int n = Integer.parseInt(args[2]);
        int warmup = Integer.parseInt(args[3]);
        int window = args.length > 4 ? Integer.parseInt(args[4]) : 64;
        if (size < 8 || n < 1 || warmup < 0 || window < 1) {
            throw new IllegalArgumentException("size >= 8, iterations >= 1, warmup >= 0, window >= 1");
        }
        try (JucxPerf p = new JucxPerf(Math.max(size, 64))) {
            // The warm-up as Fenceline's perf tool does it (its Progress.warmUp says why, and from which
            // count on it works): four passes of the measured code, 3/8, 3/8, 1/8 and 1/8 of the count,
            // the compilers awaited after the second and the last, so that the measured run enters a
            // compiled loop that no pass throws away.
            if (warmup > 0) {
                int late = warmup / 8;
                int early = warmup - 2 * late;
                p.warm(test, size, early - early / 2, window);
                p.warm(test, size, early / 2, window);
                awaitCompilers();
                p.warm(test, size, late, window);
                p.warm(test, size, late, window);
                awaitCompilers();
            }
            System.out.println(String.format(Locale.ROOT, "RESULT %s %.3f", test, p.run(test, size, n, window)));
        }
    }
}
