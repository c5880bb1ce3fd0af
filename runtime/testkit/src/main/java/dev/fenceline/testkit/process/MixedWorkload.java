package dev.fenceline.testkit.process;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.fenceline.AtomicOp;
import dev.fenceline.Endpoint;
import dev.fenceline.RemoteKey;
import dev.fenceline.Worker;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;

/**
 * A seeded stream of puts (a tenth of them up to 64 KiB), gets, fetching atomics of every kind,
 * active messages and fences, from this process to a {@link PeerWorker}: each get and fetched value
 * is checked against a model as it comes, and at the end the peer checks its own memory, message
 * count and byte sum against the model's. A fence goes before any access that overlaps a write of
 * the current epoch (or a write that overlaps a read): without one the runtime promises no order.
 */
public final class MixedWorkload {
    private MixedWorkload() {
    }

    /**
     * Runs it and checks it.
     *
     * @param w this process's worker
     * @param ep its endpoint to the peer
     * @param peer the peer process
     * @param seed the stream's seed (print it)
     * @param ops how many operations
     * @return the peer's verdict line ({@code VERIFY ok ...}) and how many fences went
     * @throws Exception if the runtime fails
     */
    public static String run(Worker w, Endpoint ep, PeerWorkerProcess peer, long seed, int ops) throws Exception {
        RemoteKey data = w.unpackRemoteKey(peer.dataKey());
        RemoteKey counters = w.unpackRemoteKey(peer.counterKey());
        byte[] model = new byte[PeerWorker.DATA];
        long[] counterModel = new long[PeerWorker.COUNTERS];
        SplittableRandom rnd = new SplittableRandom(seed);
        Semaphore window = new Semaphore(128);
        AtomicReference<String> error = new AtomicReference<>();
        long amCount = 0;
        long amSum = 0;
        int fences = 0;
        List<long[]> epoch = new ArrayList<>();
        for (int i = 0; i < ops && error.get() == null; i++) {
            int kind = rnd.nextInt(100);
            window.acquire();
            CompletableFuture<?> op;
            if (kind < 40) {
                int size = 1 + rnd.nextInt(rnd.nextInt(10) == 0 ? 65536 : 256);
                int off = rnd.nextInt(PeerWorker.DATA - size);
                byte[] bytes = new byte[size];
                rnd.nextBytes(bytes);
                fences += order(epoch, off, size, true, ep);
                System.arraycopy(bytes, 0, model, off, size);
                op = ep.put(ByteBuffer.wrap(bytes), data.baseAddress() + off, data).toCompletableFuture();
            } else if (kind < 55) {
                int size = 1 + rnd.nextInt(256);
                int off = rnd.nextInt(PeerWorker.DATA - size);
                fences += order(epoch, off, size, false, ep);
                byte[] expected = java.util.Arrays.copyOfRange(model, off, off + size);
                ByteBuffer dst = ByteBuffer.allocate(size);
                int at = i;
                op = ep.get(dst, data.baseAddress() + off, data).toCompletableFuture().thenRun(() -> {
                    if (!java.util.Arrays.equals(expected, dst.array())) {
                        error.compareAndSet(null, "op " + at + ": a get at " + off + " differs from the model");
                    }
                });
            } else if (kind < 90) {
                int c = rnd.nextInt(PeerWorker.COUNTERS);
                fences += order(epoch, PeerWorker.DATA + 8L * c, 8, true, ep);
                long old = counterModel[c];
                long operand = rnd.nextLong(1000);
                AtomicOp aop = AtomicOp.values()[rnd.nextInt(AtomicOp.values().length)];
                counterModel[c] = aop.apply(old, operand);
                int at = i;
                op = ep.atomicFetch64(aop, counters.baseAddress() + 8L * c, counters, operand).toCompletableFuture()
                        .thenAccept(v -> {
                            if (v != old) {
                                error.compareAndSet(null, "op " + at + ": " + aop + " on counter " + c + " fetched "
                                        + v + ", model " + old);
                            }
                        });
            } else if (kind < 95) {
                byte[] payload = new byte[1 + rnd.nextInt(300)];
                rnd.nextBytes(payload);
                for (byte b : payload) {
                    amSum += b & 0xFF;
                }
                amCount++;
                op = ep.sendActiveMessage(PeerWorker.MESSAGE, null, ByteBuffer.wrap(payload)).toCompletableFuture();
            } else {
                ep.fence();
                epoch.clear();
                fences++;
                op = CompletableFuture.completedFuture(null);
            }
            op.whenComplete((v, e) -> {
                if (e != null) {
                    error.compareAndSet(null, "an operation failed: " + e);
                }
                window.release();
            });
        }
        assertTrue(window.tryAcquire(128, 60, TimeUnit.SECONDS), "operations still in flight");
        ep.flush().toCompletableFuture().get(30, TimeUnit.SECONDS);
        assertEquals(null, error.get(), "seed " + seed + "; " + w.statistics() + "; " + ep.lanes());
        ByteBuffer counterBytes = ByteBuffer.allocate(PeerWorker.COUNTERS * 8).order(ByteOrder.nativeOrder());
        for (long v : counterModel) {
            counterBytes.putLong(v);
        }
        String expected = PeerWorker.digest(ByteBuffer.wrap(model), counterBytes.flip()) + " " + amCount + " " + amSum;
        ep.sendActiveMessage(PeerWorker.VERIFY, ByteBuffer.wrap(expected.getBytes(StandardCharsets.US_ASCII)), null)
                .toCompletableFuture().get(30, TimeUnit.SECONDS);
        String verdict = peer.out().readLine();
        assertEquals("VERIFY ok " + expected, verdict, "seed " + seed);
        return verdict + " after " + ops + " operations and " + fences + " fences";
    }

    /** Fences (and starts a new epoch) if this access conflicts with one of the current epoch. */
    private static int order(List<long[]> epoch, long off, long size, boolean write, Endpoint ep) {
        for (long[] r : epoch) {
            if (off < r[1] && r[0] < off + size && (write || r[2] == 1)) {
                ep.fence();
                epoch.clear();
                epoch.add(new long[] {off, off + size, write ? 1 : 0});
                return 1;
            }
        }
        epoch.add(new long[] {off, off + size, write ? 1 : 0});
        return 0;
    }
}
