package dev.fenceline.transport.shm;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.typesafe.config.ConfigFactory;
import dev.fenceline.AtomicOp;
import dev.fenceline.Endpoint;
import dev.fenceline.Fenceline;
import dev.fenceline.MemoryRegion;
import dev.fenceline.RemoteAccessException;
import dev.fenceline.RemoteKey;
import dev.fenceline.Worker;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * The fast path by grant on shm: an idle endpoint lets the calling thread write directly; anything
 * submitted the slow way (a get, an active message, a fetch) voids the grant until it completes, so
 * a thread's direct write never passes its own earlier operations. Threads mixing both paths on one
 * endpoint lose and duplicate nothing. The seed is printed.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class FastPathTest {
    @Test
    void directWritesNeverPassTheThreadsEarlierOperations() throws Exception {
        long seed = Long.getLong("fenceline.test.seed", 20261129L);
        System.out.println("FastPathTest seed " + seed);
        try (Fenceline f = Fenceline.create(ConfigFactory.parseString("fenceline.transports = [shm]"))) {
            Worker a = f.newWorker("a").toCompletableFuture().get(10, TimeUnit.SECONDS);
            Worker b = f.newWorker("b").toCompletableFuture().get(10, TimeUnit.SECONDS);
            MemoryRegion region = b.allocate(1 << 16);
            RemoteKey key = a.unpackRemoteKey(region.remoteKey().toBytes());
            Endpoint ep = a.connect(b.address()).toCompletableFuture().get(10, TimeUnit.SECONDS);
            b.setActiveMessageHandler(1, (h, p) -> { });
            ByteBuffer view = region.buffer().order(ByteOrder.nativeOrder());

            // The actor publishes the grant just after the flush completes: the first puts may still
            // take the actor's path. A put that took the fast path is visible when put() returns.
            ep.flush().toCompletableFuture().get(10, TimeUnit.SECONDS);
            boolean fast = false;
            for (int attempt = 0; attempt < 1000 && !fast; attempt++) {
                long before = a.statistics().direct();
                CompletableFuture<Void> put = ep.put(ByteBuffer.allocate(8).order(ByteOrder.nativeOrder())
                        .putLong(0, 42 + attempt), region.address(), key).toCompletableFuture();
                fast = a.statistics().direct() > before;
                if (fast) {
                    assertEquals(42 + attempt, view.getLong(0), "a direct put is visible when put() returns");
                    assertTrue(put.isDone(), "and its stage is complete");
                    // Fast-path stages are one shared stage: what a caller does to its copy stays there.
                    put.completeExceptionally(new IllegalStateException("a caller's own business"));
                    put.obtrudeException(new IllegalStateException("still its own"));
                    long directBefore = a.statistics().direct();
                    CompletableFuture<Void> next = ep.put(ByteBuffer.allocate(8), region.address() + 16, key)
                            .toCompletableFuture();
                    next.get(10, TimeUnit.SECONDS); // completes normally (throws otherwise)
                    assertEquals(directBefore + 1, a.statistics().direct(), "the second put took the fast path too");
                    continue; // this put's own copy now holds the caller's exception
                }
                put.get(10, TimeUnit.SECONDS);
            }
            assertTrue(fast, "an idle endpoint grants the fast path: " + a.statistics());

            // One thread: a slow operation, then writes to the same word: they land after it.
            SplittableRandom rnd = new SplittableRandom(seed);
            for (int i = 0; i < 2000; i++) {
                long v = rnd.nextLong();
                CompletableFuture<Long> fetched = ep.atomicFetch64(AtomicOp.SWAP, region.address() + 8, key, v)
                        .toCompletableFuture();
                ep.fence();
                ep.atomicPostImplicit64(AtomicOp.XOR, region.address() + 8, key, 0xFF);
                if (i % 3 == 0) {
                    ep.sendActiveMessage(1, null, null);
                }
                ep.flush().toCompletableFuture().get(10, TimeUnit.SECONDS);
                fetched.get(10, TimeUnit.SECONDS);
                assertEquals(v ^ 0xFF, view.getLong(8), "round " + i + " (seed " + seed + ")");
            }

            // Fetching atomics, compare-and-swap and gets take the fast path too, with exact results.
            // The actor republishes the grant a moment after the last slow operation completed, and a
            // fetch that comes first takes the slow way and voids it again (on a busy machine, again
            // and again): fetch until one goes directly.
            long v = 0;
            long direct = a.statistics().direct();
            while (a.statistics().direct() == direct) {
                assertTrue(v < 1000, "no grant after " + v + " fetches: " + a.statistics());
                assertEquals(v, ep.atomicFetch64(AtomicOp.ADD, region.address() + 24, key, 1).toCompletableFuture()
                        .get(10, TimeUnit.SECONDS));
                v++;
            }
            long directBefore = a.statistics().direct();
            for (long i = v; i < v + 1000; i++) {
                assertEquals(i, ep.atomicFetch64(AtomicOp.ADD, region.address() + 24, key, 1).toCompletableFuture()
                        .get(10, TimeUnit.SECONDS));
            }
            assertEquals(v + 1000, ep.compareAndSwap64(region.address() + 24, key, v + 1000, 7).toCompletableFuture()
                    .get(10, TimeUnit.SECONDS));
            assertEquals(7, (int) ep.atomicFetch32(AtomicOp.ADD, region.address() + 24, key, 0).toCompletableFuture()
                    .get(10, TimeUnit.SECONDS));
            ByteBuffer back = ByteBuffer.allocate(8).order(ByteOrder.nativeOrder());
            ep.get(back, region.address() + 24, key).toCompletableFuture().get(10, TimeUnit.SECONDS);
            assertEquals(7, back.getLong(0));
            // With the grant held and nothing else submitted, every one takes the fast path (a
            // keepalive probe in the peer's inbox may send a few the slow way meanwhile).
            assertTrue(a.statistics().direct() - directBefore >= 990, a.statistics().toString());

            // Threads mixing direct ADDs with slow fetches: the sum is exact.
            int threads = 4;
            int each = 20_000;
            List<Thread> ts = new ArrayList<>();
            List<Throwable> errors = new java.util.concurrent.CopyOnWriteArrayList<>();
            for (int t = 0; t < threads; t++) {
                Thread th = new Thread(() -> {
                    try {
                        for (int i = 0; i < each; i++) {
                            if (i % 100 == 0) {
                                ep.atomicFetch64(AtomicOp.ADD, region.address() + 16, key, 1).toCompletableFuture()
                                        .get(10, TimeUnit.SECONDS);
                            } else {
                                ep.atomicPostImplicit64(AtomicOp.ADD, region.address() + 16, key, 1);
                            }
                        }
                    } catch (Exception | AssertionError e) {
                        errors.add(e);
                    }
                });
                ts.add(th);
                th.start();
            }
            for (Thread th : ts) {
                th.join();
            }
            ep.flush().toCompletableFuture().get(10, TimeUnit.SECONDS);
            assertEquals(List.of(), errors);
            assertEquals((long) threads * each, view.getLong(16), "every ADD applied exactly once");

            // Refusals on the fast path are typed, like on the slow one.
            region.close();
            ExecutionException e = assertThrows(ExecutionException.class, () -> ep.put(ByteBuffer.allocate(8),
                    region.address(), key).toCompletableFuture().get(10, TimeUnit.SECONDS));
            assertEquals(RemoteAccessException.Reason.REGION_CLOSED,
                    assertInstanceOf(RemoteAccessException.class, e.getCause()).reason());
            System.out.println("FastPathTest: " + a.statistics());
        }
    }
}
