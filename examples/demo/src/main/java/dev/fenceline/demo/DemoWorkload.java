package dev.fenceline.demo;

import dev.fenceline.AtomicOp;
import dev.fenceline.Endpoint;
import dev.fenceline.Fenceline;
import dev.fenceline.MemoryRegion;
import dev.fenceline.RemoteKey;
import dev.fenceline.Worker;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.SplittableRandom;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

/**
 * The demo's workload, checked against a sequential model of the target's memory. Operations that
 * touch the same bytes as an earlier operation of the current epoch are separated from it by a
 * fence, exactly as a user must; operations on disjoint bytes run unordered across lanes. Every
 * fetched value and every get is compared with the model when it completes, and the whole target
 * is compared after the final flush.
 */
final class DemoWorkload {
    private static final int COUNTERS = 64;
    private static final int AM_ID = 1;
    private static final long TIMEOUT_S = 60;

    private final Fenceline fenceline;
    private final int ops;
    private final long seed;
    private final int regionBytes;
    private final int window;

    private final List<String> errors = new ArrayList<>();
    private final ArrayDeque<CompletableFuture<?>> inFlight = new ArrayDeque<>();
    private final List<long[]> epochRanges = new ArrayList<>();
    private long puts;
    private long gets;
    private long atomics;
    private long messages;
    private long fences;
    private long flushes;
    private long verifiedBytes;
    private final AtomicLong verifiedResults = new AtomicLong();
    private boolean fencing = true;

    DemoWorkload(Fenceline fenceline, int ops, long seed, int regionBytes, int window) {
        this.fenceline = fenceline;
        this.ops = ops;
        this.seed = seed;
        this.regionBytes = regionBytes;
        this.window = window;
    }

    /** The same workload with every fence left out: for proving that the checks can fail. */
    DemoReport runWithoutFences() throws Exception {
        fencing = false;
        return run();
    }

    DemoReport run() throws Exception {
        Worker alpha = fenceline.newWorker("alpha").toCompletableFuture().get(TIMEOUT_S, TimeUnit.SECONDS);
        Worker beta = fenceline.newWorker("beta").toCompletableFuture().get(TIMEOUT_S, TimeUnit.SECONDS);
        MemoryRegion data = beta.allocate(regionBytes);
        MemoryRegion counters = beta.allocate(COUNTERS * 8L);
        AtomicLong amCount = new AtomicLong();
        AtomicLong amSum = new AtomicLong();
        beta.setActiveMessageHandler(AM_ID, (header, payload) -> {
            amCount.incrementAndGet();
            long s = 0;
            while (payload.hasRemaining()) {
                s += payload.get() & 0xFF;
            }
            amSum.addAndGet(s);
        });
        // Keys travel as bytes, as they would between processes.
        RemoteKey dataKey = alpha.unpackRemoteKey(data.remoteKey().toBytes());
        RemoteKey counterKey = alpha.unpackRemoteKey(counters.remoteKey().toBytes());
        Endpoint ep = alpha.connect(beta.address()).toCompletableFuture().get(TIMEOUT_S, TimeUnit.SECONDS);

        byte[] model = new byte[regionBytes];
        long[] counterModel = new long[COUNTERS];
        long expectedAmSum = 0;
        SplittableRandom rnd = new SplittableRandom(seed);
        long start = System.nanoTime();

        for (int i = 0; i < ops; i++) {
            int kind = rnd.nextInt(100);
            if (kind < 40) {
                int size = size(rnd);
                int off = rnd.nextInt(regionBytes - size + 1);
                byte[] bytes = new byte[size];
                rnd.nextBytes(bytes);
                order(off, size, true, ep);
                System.arraycopy(bytes, 0, model, off, size);
                track(ep.put(ByteBuffer.wrap(bytes), data.address() + off, dataKey), "put " + size + "B at " + off);
                puts++;
            } else if (kind < 55) {
                int size = size(rnd);
                int off = rnd.nextInt(regionBytes - size + 1);
                order(off, size, false, ep);
                byte[] expected = Arrays.copyOfRange(model, off, off + size);
                ByteBuffer dst = ByteBuffer.allocateDirect(size);
                String what = "get " + size + "B at " + off;
                track(ep.get(dst, data.address() + off, dataKey).thenRun(() -> {
                    byte[] got = new byte[size];
                    dst.get(0, got);
                    check(Arrays.equals(expected, got), what + " returned bytes that differ from the model");
                }), what);
                gets++;
            } else if (kind < 93) {
                int c = rnd.nextInt(COUNTERS);
                long addr = counters.address() + 8L * c;
                order(regionBytes + 8 * c, 8, true, ep); // counters live in their own range of the model
                long operand = rnd.nextLong(1000);
                long old = counterModel[c];
                AtomicOp op = AtomicOp.values()[rnd.nextInt(AtomicOp.values().length)];
                String what = op + " counter " + c;
                if (rnd.nextInt(4) == 0 && op.postable()) {
                    track(ep.atomicPost64(op, addr, counterKey, operand), "post " + what);
                } else if (rnd.nextInt(5) == 0) {
                    long expected = rnd.nextBoolean() ? old : old + 1;
                    long desired = operand;
                    track(ep.compareAndSwap64(addr, counterKey, expected, desired)
                            .thenAccept(v -> check(v == old, "cswap counter " + c + " returned " + v + ", model " + old)),
                            "cswap counter " + c);
                    counterModel[c] = old == expected ? desired : old;
                    atomics++;
                    continue;
                } else {
                    track(ep.atomicFetch64(op, addr, counterKey, operand)
                            .thenAccept(v -> check(v == old, "fetch " + what + " returned " + v + ", model " + old)),
                            "fetch " + what);
                }
                counterModel[c] = apply(op, old, operand);
                atomics++;
            } else if (kind < 98) {
                byte[] payload = new byte[1 + rnd.nextInt(512)];
                rnd.nextBytes(payload);
                for (byte b : payload) {
                    expectedAmSum += b & 0xFF;
                }
                track(ep.sendActiveMessage(AM_ID, ByteBuffer.allocate(0), ByteBuffer.wrap(payload)), "active message");
                messages++;
            } else {
                settle(ep);
                verifyWindow(data, model, rnd);
            }
        }
        settle(ep);
        check(amCount.get() == messages, "handler saw " + amCount.get() + " active messages, sent " + messages);
        check(amSum.get() == expectedAmSum, "active-message payload checksum " + amSum.get() + ", sent "
                + expectedAmSum);
        byte[] actual = new byte[regionBytes];
        data.buffer().get(actual);
        verifyBytes(model, actual, 0, regionBytes);
        ByteBuffer cm = counters.buffer().order(ByteOrder.nativeOrder());
        for (int c = 0; c < COUNTERS; c++) {
            check(cm.getLong(8 * c) == counterModel[c], "counter " + c + " is " + cm.getLong(8 * c) + ", model "
                    + counterModel[c]);
        }
        verifiedBytes += COUNTERS * 8L;
        Duration elapsed = Duration.ofNanos(System.nanoTime() - start);
        return new DemoReport(fenceline.transports(), fenceline.fenceMode(), ep.lanes(), puts, gets, atomics, messages,
                fences, flushes, verifiedBytes, verifiedResults.get(), List.copyOf(errors), alpha.statistics(),
                elapsed);
    }

    /** 70 % short, 25 % medium, 5 % bulk transfers. */
    private int size(SplittableRandom rnd) {
        int p = rnd.nextInt(100);
        int size = p < 70 ? 1 + rnd.nextInt(256) : p < 95 ? 257 + rnd.nextInt(16 * 1024) : 16 * 1024 + rnd.nextInt(256 * 1024);
        return Math.min(size, regionBytes);
    }

    /**
     * Fences when this access conflicts with an earlier one of the current epoch (overlapping
     * bytes, at least one of them a write), and at least every 64 accesses.
     */
    private void order(long off, long size, boolean write, Endpoint ep) {
        boolean conflict = epochRanges.size() >= 64;
        for (long[] r : epochRanges) {
            if (off < r[1] && r[0] < off + size && (write || r[2] == 1)) {
                conflict = true;
                break;
            }
        }
        if (conflict) {
            if (fencing) {
                ep.fence();
                fences++;
            }
            epochRanges.clear();
        }
        epochRanges.add(new long[] {off, off + size, write ? 1 : 0});
    }

    private static long apply(AtomicOp op, long old, long operand) {
        return switch (op) {
            case ADD -> old + operand;
            case AND -> old & operand;
            case OR -> old | operand;
            case XOR -> old ^ operand;
            case SWAP -> operand;
        };
    }

    private void track(java.util.concurrent.CompletionStage<?> stage, String what) throws Exception {
        CompletableFuture<?> f = stage.toCompletableFuture().whenComplete((v, e) -> {
            if (e != null) {
                check(false, what + " failed: " + e);
            }
        });
        inFlight.add(f);
        while (inFlight.size() > window) {
            awaitQuietly(inFlight.poll());
        }
    }

    private void settle(Endpoint ep) throws Exception {
        awaitQuietly(ep.flush().toCompletableFuture());
        flushes++;
        while (!inFlight.isEmpty()) {
            awaitQuietly(inFlight.poll());
        }
        epochRanges.clear(); // a completed flush orders everything before it
    }

    private void awaitQuietly(CompletableFuture<?> f) throws Exception {
        try {
            f.get(TIMEOUT_S, TimeUnit.SECONDS);
        } catch (java.util.concurrent.ExecutionException e) {
            // already recorded by the stage's own handler
        }
    }

    private void verifyWindow(MemoryRegion data, byte[] model, SplittableRandom rnd) {
        int size = Math.min(regionBytes, 64 * 1024);
        int off = rnd.nextInt(regionBytes - size + 1);
        byte[] actual = new byte[size];
        data.buffer().get(off, actual);
        verifyBytes(Arrays.copyOfRange(model, off, off + size), actual, off, size);
    }

    private void verifyBytes(byte[] expected, byte[] actual, int base, int size) {
        int mismatch = Arrays.mismatch(expected, actual);
        check(mismatch < 0, "target byte " + (base + mismatch) + " differs from the model after a flush");
        verifiedBytes += size;
    }

    private void check(boolean ok, String error) {
        if (ok) {
            verifiedResults.incrementAndGet();
            return;
        }
        synchronized (errors) {
            errors.add(error);
        }
    }
}
