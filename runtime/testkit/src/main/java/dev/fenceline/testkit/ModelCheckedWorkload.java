package dev.fenceline.testkit;

import dev.fenceline.ActiveMessageHandler;
import dev.fenceline.AtomicOp;
import dev.fenceline.Endpoint;
import dev.fenceline.MemoryRegion;
import dev.fenceline.RemoteKey;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Objects;
import java.util.SplittableRandom;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicLong;

/**
 * A seeded random workload of puts, gets, atomics and active messages on one endpoint, checked
 * against a sequential model of the target's memory, the way a careful user orders their own
 * operations: an operation that touches bytes an earlier operation of the current epoch touched
 * (at least one of them writing) is separated from it by a fence; operations on disjoint bytes
 * run unordered over whatever lanes the endpoint picks. Every fetched value and every get is
 * compared with the model when it completes, random windows of the target after each flush, and
 * the whole slice at the end.
 *
 * <p>Several workloads may share an endpoint from several threads, each on its own slice of the
 * data region and its own counters. The target memory is read directly, so the target worker must
 * live in this JVM.
 */
public final class ModelCheckedWorkload {
    private static final long TIMEOUT_S = 60;

    /**
     * Where the workload runs and how.
     *
     * @param data the target's data region (read directly for verification)
     * @param dataKey its key as the origin holds it
     * @param sliceOffset first byte of the data region this workload owns
     * @param sliceLength bytes it owns
     * @param counters the target's counter region (8-byte words)
     * @param counterKey its key as the origin holds it
     * @param firstCounter first word this workload owns
     * @param counterCount words it owns
     * @param activeMessageId the id of the handler from {@link #activeMessageHandler()}, or -1 for no
     *     active messages (when the target is in another process, where this object's handler cannot
     *     count them)
     * @param seed seeds everything random
     * @param window operations in flight at most
     * @param fencing false to leave every fence out (to prove the checks can fail)
     */
    public record Options(MemoryRegion data, RemoteKey dataKey, int sliceOffset, int sliceLength,
            MemoryRegion counters, RemoteKey counterKey, int firstCounter, int counterCount, int activeMessageId,
            long seed, int window, boolean fencing) {
        /**
         * Checks the slices fit their regions.
         *
         * @param data the data region
         * @param dataKey its key, as the origin unpacked it
         * @param sliceOffset where this workload's slice starts
         * @param sliceLength its length
         * @param counters the counters' region
         * @param counterKey its key
         * @param firstCounter this workload's first counter
         * @param counterCount its number of counters
         * @param activeMessageId the handler id it sends to
         * @param seed the workload's seed
         * @param window operations in flight at most
         * @param fencing false to leave every fence out
         */
        public Options {
            Objects.requireNonNull(data, "data");
            Objects.requireNonNull(counters, "counters");
            if (sliceOffset < 0 || sliceLength < 1 || sliceOffset + (long) sliceLength > data.length()) {
                throw new IllegalArgumentException("data slice [" + sliceOffset + ", +" + sliceLength
                        + ") outside a region of " + data.length() + " bytes");
            }
            if (firstCounter < 0 || counterCount < 1 || (firstCounter + (long) counterCount) * 8 > counters.length()) {
                throw new IllegalArgumentException("counters [" + firstCounter + ", +" + counterCount
                        + ") outside a region of " + counters.length() / 8 + " words");
            }
            if (window < 1) {
                throw new IllegalArgumentException("window " + window + " < 1");
            }
        }
    }

    /**
     * What the workload did and what failed to verify.
     *
     * @param puts puts issued
     * @param gets gets issued
     * @param atomics atomics issued
     * @param messages active messages sent
     * @param fences fences issued
     * @param flushes flushes awaited
     * @param verifiedBytes target bytes compared with the model
     * @param checks checks that passed
     * @param errors what failed (empty when all is well)
     * @param elapsed wall time
     */
    public record Result(long puts, long gets, long atomics, long messages, long fences, long flushes,
            long verifiedBytes, long checks, List<String> errors, Duration elapsed) {
        /** @return whether everything verified */
        public boolean ok() {
            return errors.isEmpty();
        }

        /** @return operations issued */
        public long operations() {
            return puts + gets + atomics + messages;
        }
    }

    private final Endpoint ep;
    private final Options o;
    private final List<String> errors = new ArrayList<>();
    private final ArrayDeque<CompletableFuture<?>> inFlight = new ArrayDeque<>();
    private final List<long[]> epochRanges = new ArrayList<>();
    private final AtomicLong checks = new AtomicLong();
    private final AtomicLong amCount = new AtomicLong();
    private final AtomicLong amSum = new AtomicLong();
    private long puts;
    private long gets;
    private long atomics;
    private long messages;
    private long fences;
    private long flushes;
    private long verifiedBytes;

    /**
     * @param ep the endpoint to the target worker
     * @param options where and how
     */
    public ModelCheckedWorkload(Endpoint ep, Options options) {
        this.ep = ep;
        this.o = options;
    }

    /** @return the handler to register at the target under {@link Options#activeMessageId()} */
    public ActiveMessageHandler activeMessageHandler() {
        return (header, payload) -> {
            amCount.incrementAndGet();
            long s = 0;
            while (payload.hasRemaining()) {
                s += payload.get() & 0xFF;
            }
            amSum.addAndGet(s);
        };
    }

    /**
     * Runs the workload on the calling thread.
     *
     * @param ops operations to issue
     * @return what happened
     * @throws InterruptedException if interrupted while waiting
     * @throws TimeoutException if an operation did not complete within a minute
     */
    public Result run(int ops) throws InterruptedException, TimeoutException {
        int n = o.sliceLength();
        byte[] model = new byte[n];
        o.data().buffer().get(o.sliceOffset(), model); // start from what is there
        long[] counterModel = new long[o.counterCount()];
        ByteBuffer cm = o.counters().buffer().order(ByteOrder.nativeOrder());
        for (int c = 0; c < counterModel.length; c++) {
            counterModel[c] = cm.getLong(8 * (o.firstCounter() + c));
        }
        long expectedAmSum = 0;
        SplittableRandom rnd = new SplittableRandom(o.seed());
        long start = System.nanoTime();
        long base = o.data().address() + o.sliceOffset();

        for (int i = 0; i < ops; i++) {
            int kind = rnd.nextInt(100);
            if (kind < 40) {
                int size = size(rnd);
                int off = rnd.nextInt(n - size + 1);
                byte[] bytes = new byte[size];
                rnd.nextBytes(bytes);
                order(off, size, true);
                System.arraycopy(bytes, 0, model, off, size);
                track(ep.put(ByteBuffer.wrap(bytes), base + off, o.dataKey()), "put " + size + "B at " + off);
                puts++;
            } else if (kind < 55) {
                int size = size(rnd);
                int off = rnd.nextInt(n - size + 1);
                order(off, size, false);
                byte[] expected = Arrays.copyOfRange(model, off, off + size);
                ByteBuffer dst = ByteBuffer.allocateDirect(size);
                String what = "get " + size + "B at " + off;
                track(ep.get(dst, base + off, o.dataKey()).thenRun(() -> {
                    byte[] got = new byte[size];
                    dst.get(0, got);
                    int m = Arrays.mismatch(expected, got);
                    check(m < 0, what + " returned a byte at " + (off + m) + " that differs from the model");
                }), what);
                gets++;
            } else if (kind < 93) {
                int c = rnd.nextInt(counterModel.length);
                long addr = o.counters().address() + 8L * (o.firstCounter() + c);
                order(n + 8L * c, 8, true); // counters live in their own range of the model
                long operand = rnd.nextLong(1000);
                long old = counterModel[c];
                AtomicOp op = AtomicOp.values()[rnd.nextInt(AtomicOp.values().length)];
                String what = op + " counter " + c;
                if (rnd.nextInt(4) == 0 && op.postable()) {
                    track(ep.atomicPost64(op, addr, o.counterKey(), operand), "post " + what);
                    counterModel[c] = op.apply(old, operand);
                } else if (rnd.nextInt(5) == 0) {
                    long expected = rnd.nextBoolean() ? old : old + 1;
                    track(ep.compareAndSwap64(addr, o.counterKey(), expected, operand)
                            .thenAccept(v -> check(v == old, "cswap counter " + c + " returned " + v + ", model " + old)),
                            "cswap counter " + c);
                    counterModel[c] = old == expected ? operand : old;
                } else {
                    track(ep.atomicFetch64(op, addr, o.counterKey(), operand)
                            .thenAccept(v -> check(v == old, "fetch " + what + " returned " + v + ", model " + old)),
                            "fetch " + what);
                    counterModel[c] = op.apply(old, operand);
                }
                atomics++;
            } else if (kind < 98 && o.activeMessageId() >= 0) {
                byte[] payload = new byte[1 + rnd.nextInt(512)];
                rnd.nextBytes(payload);
                for (byte b : payload) {
                    expectedAmSum += b & 0xFF;
                }
                if (rnd.nextBoolean()) { // implicit: the next flush reports a failure (settle checks it)
                    ep.sendActiveMessageImplicit(o.activeMessageId(), null, ByteBuffer.wrap(payload));
                } else {
                    track(ep.sendActiveMessage(o.activeMessageId(), ByteBuffer.allocate(0), ByteBuffer.wrap(payload)),
                            "active message");
                }
                messages++;
            } else {
                settle();
                verifyWindow(model, rnd);
            }
        }
        settle();
        check(amCount.get() == messages, "handler saw " + amCount.get() + " active messages, sent " + messages);
        check(amSum.get() == expectedAmSum, "active-message payload checksum " + amSum.get() + ", sent "
                + expectedAmSum);
        byte[] actual = new byte[n];
        o.data().buffer().get(o.sliceOffset(), actual);
        verifyBytes(model, actual, 0);
        ByteBuffer end = o.counters().buffer().order(ByteOrder.nativeOrder()); // a view, or a fresh copy
        for (int c = 0; c < counterModel.length; c++) {
            long v = end.getLong(8 * (o.firstCounter() + c));
            check(v == counterModel[c], "counter " + c + " is " + v + ", model " + counterModel[c]);
        }
        verifiedBytes += counterModel.length * 8L;
        synchronized (errors) {
            return new Result(puts, gets, atomics, messages, fences, flushes, verifiedBytes, checks.get(),
                    List.copyOf(errors), Duration.ofNanos(System.nanoTime() - start));
        }
    }

    /**
     * Runs the workload on a daemon thread of its own, for a test that injects faults meanwhile.
     *
     * @param ops operations to issue
     * @return completes with what happened, or exceptionally if the run itself failed (interrupted,
     *     or an operation did not complete within a minute)
     */
    public CompletableFuture<Result> start(int ops) {
        CompletableFuture<Result> done = new CompletableFuture<>();
        Thread t = new Thread(() -> {
            try {
                done.complete(run(ops));
            } catch (InterruptedException | TimeoutException | RuntimeException e) {
                done.completeExceptionally(e);
            }
        }, "model-checked-workload");
        t.setDaemon(true);
        t.start();
        return done;
    }

    /** 70 % short, 25 % medium, 5 % bulk transfers. */
    private int size(SplittableRandom rnd) {
        int p = rnd.nextInt(100);
        int size = p < 70 ? 1 + rnd.nextInt(256)
                : p < 95 ? 257 + rnd.nextInt(16 * 1024) : 16 * 1024 + rnd.nextInt(256 * 1024);
        return Math.min(size, o.sliceLength());
    }

    /**
     * Fences when this access conflicts with an earlier one of the current epoch (overlapping
     * bytes, at least one of them a write), and at least every 64 accesses.
     */
    private void order(long off, long size, boolean write) {
        boolean conflict = epochRanges.size() >= 64;
        for (long[] r : epochRanges) {
            if (off < r[1] && r[0] < off + size && (write || r[2] == 1)) {
                conflict = true;
                break;
            }
        }
        if (conflict) {
            if (o.fencing()) {
                ep.fence();
                fences++;
            }
            epochRanges.clear();
        }
        epochRanges.add(new long[] {off, off + size, write ? 1 : 0});
    }


    private void track(CompletionStage<?> stage, String what) throws InterruptedException, TimeoutException {
        CompletableFuture<?> f = stage.toCompletableFuture().handle((v, e) -> {
            if (e != null) {
                check(false, what + " failed: " + e);
            }
            return null; // recorded here, once
        });
        inFlight.add(f);
        while (inFlight.size() > o.window()) {
            await(inFlight.poll());
        }
    }

    private void settle() throws InterruptedException, TimeoutException {
        await(ep.flush().toCompletableFuture());
        flushes++;
        while (!inFlight.isEmpty()) {
            await(inFlight.poll());
        }
        epochRanges.clear(); // a completed flush orders everything before it
    }

    private void await(CompletableFuture<?> f) throws InterruptedException, TimeoutException {
        try {
            f.get(TIMEOUT_S, TimeUnit.SECONDS);
        } catch (ExecutionException e) {
            check(false, "completed with an error: " + e.getCause());
        }
    }

    private void verifyWindow(byte[] model, SplittableRandom rnd) {
        int size = Math.min(o.sliceLength(), 64 * 1024);
        int off = rnd.nextInt(o.sliceLength() - size + 1);
        byte[] actual = new byte[size];
        o.data().buffer().get(o.sliceOffset() + off, actual);
        verifyBytes(Arrays.copyOfRange(model, off, off + size), actual, off);
    }

    private void verifyBytes(byte[] expected, byte[] actual, int at) {
        int mismatch = Arrays.mismatch(expected, actual);
        check(mismatch < 0, "target byte " + (o.sliceOffset() + at + mismatch) + " differs from the model after a flush");
        verifiedBytes += actual.length;
    }

    private void check(boolean ok, String error) {
        if (ok) {
            checks.incrementAndGet();
            return;
        }
        synchronized (errors) {
            errors.add(error);
        }
    }
}
