package dev.fenceline.perf;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;

/**
 * Floors under the shared-memory rows that are not copies, measured in the same run with no runtime
 * at all: two threads of this process handing a cache line to each other through a direct buffer
 * (what a put ping-pong or an active message's one way is at best: the line's move between cores),
 * and fetch-adds on a word of a direct buffer from one thread (what a fetch-add on a mapped word is
 * at best). A mapped segment is the same coherent memory, so a second process does not change them.
 */
final class MemoryFloors {
    private static final VarHandle LONG = MethodHandles.byteBufferViewVarHandle(long[].class,
            ByteOrder.nativeOrder());
    private static final long TIMEOUT_NANOS = TimeUnit.SECONDS.toNanos(60);

    private MemoryFloors() {
    }

    /**
     * A ping-pong between two threads: each copies {@code size} bytes, whose last aligned 8 are a
     * sequence number, into the other's area (then a release fence), and the other spins on that number
     * (acquire): the put ping-pong's pattern through a peer's mapping, without the runtime. Half a
     * round trip is recorded.
     *
     * One pass (the caller warms up with passes of it: {@link Progress#warmUp}).
     *
     * @param size bytes per message (at least 8)
     * @param n round trips
     * @return half of each round trip's time
     * @throws InterruptedException if interrupted while the responder ends
     */
    static PerfResult pingPong(int size, int n) throws InterruptedException {
        int bytes = Math.max(size, 8);
        int stride = (bytes + 127) & ~127; // the two areas never share a line
        ByteBuffer areas = ByteBuffer.allocateDirect(2 * stride + 128).order(ByteOrder.nativeOrder());
        int ping = 0;
        int pong = stride;
        int word = (bytes - 8) & ~7; // the last aligned word: an acquiring read needs its alignment
        AtomicReference<Throwable> failure = new AtomicReference<>();
        Thread responder = new Thread(() -> {
            ByteBuffer out = ByteBuffer.allocateDirect(bytes).order(ByteOrder.nativeOrder());
            try {
                for (long i = 1; i <= n; i++) {
                    await(areas, ping + word, i);
                    send(out, word, i, areas, pong);
                }
            } catch (IllegalStateException e) {
                failure.set(e);
            }
        }, "floor-responder");
        responder.setDaemon(true);
        responder.start();
        ByteBuffer out = ByteBuffer.allocateDirect(bytes).order(ByteOrder.nativeOrder());
        Latencies h = new Latencies();
        long start = System.nanoTime();
        try {
            for (long i = 1; i <= n; i++) {
                long t0 = System.nanoTime();
                send(out, word, i, areas, ping);
                await(areas, pong + word, i);
                h.recordValue((System.nanoTime() - t0) / 2);
            }
        } finally {
            responder.join(TimeUnit.SECONDS.toMillis(10));
        }
        if (failure.get() != null) {
            throw new IllegalStateException("the floor's responder failed", failure.get());
        }
        return PerfResult.latency("core_lat", "memory", size, h, (System.nanoTime() - start) / 1e9);
    }

    /** A put's copy: the message, its sequence number last, into the area, then a release fence. */
    private static void send(ByteBuffer out, int word, long seq, ByteBuffer areas, int area) {
        out.putLong(word, seq);
        areas.put(area, out, 0, out.capacity());
        VarHandle.releaseFence();
    }

    /** Spins until the word at {@code at} reaches {@code value}, as the put ping-pong's poller spins. */
    private static void await(ByteBuffer areas, int at, long value) {
        long deadline = 0;
        for (int spins = 0; (long) LONG.getAcquire(areas, at) < value; spins++) {
            if ((spins & 0xFFFF) == 0xFFFF) { // rarely: a clock read per spin would be the floor's cost
                long now = System.nanoTime();
                if (deadline == 0) {
                    deadline = now + TIMEOUT_NANOS;
                } else if (now - deadline > 0) {
                    throw new IllegalStateException("memory ping-pong stalled at " + value);
                }
            }
            Thread.onSpinWait();
        }
    }

    /**
     * Fetch-adds on one word of a direct buffer from this thread, each result used.
     *
     * One pass (the caller warms up with passes of it: {@link Progress#warmUp}).
     *
     * @param n operations
     * @return their rate
     */
    static PerfResult fetchAdd(int n) {
        ByteBuffer word = ByteBuffer.allocateDirect(64).order(ByteOrder.nativeOrder());
        long start = System.nanoTime();
        long sink = fetchAdds(word, n);
        double seconds = (System.nanoTime() - start) / 1e9;
        long expected = n;
        if ((long) LONG.getVolatile(word, 0) != expected || sink != expected * (expected - 1) / 2) {
            throw new IllegalStateException("fetch-add floor: the word holds " + LONG.getVolatile(word, 0)
                    + " after " + expected + " adds");
        }
        return PerfResult.throughput("atomic_mr", "memory", 8, n, seconds);
    }

    /** @return the sum of the values fetched */
    private static long fetchAdds(ByteBuffer word, int n) {
        long sink = 0;
        for (int i = 0; i < n; i++) {
            sink += (long) LONG.getAndAdd(word, 0, 1L);
        }
        return sink;
    }
}
