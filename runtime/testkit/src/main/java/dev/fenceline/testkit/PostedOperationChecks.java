package dev.fenceline.testkit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.fenceline.AtomicOp;
import dev.fenceline.Endpoint;
import dev.fenceline.MemoryRegion;
import dev.fenceline.RemoteAccessException;
import dev.fenceline.RemoteKey;
import dev.fenceline.Worker;
import dev.fenceline.spi.RequestTrace;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Random;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;

/**
 * Checks of the fast path by grant on a lane that takes operations posted by the calling thread
 * ({@link dev.fenceline.spi.DirectPosting}), the same for every transport that offers one: callers
 * post once the endpoint is idle, their callbacks run in answer order, a refusal at the target is
 * typed, and threads posting and submitting at once keep every operation once. A transport's test
 * makes the two workers and the endpoint, and calls these.
 */
public final class PostedOperationChecks {
    private static final long TIMEOUT_S = 20;

    private PostedOperationChecks() {
    }

    /** Records what the endpoint did with one request ({@link RequestTrace#during}). */
    public static final class Trace implements RequestTrace {
        private final List<String> events = new CopyOnWriteArrayList<>();

        @Override
        public void admitted(int lane, long sequence, boolean deduplicated, boolean visibilityReported) {
            events.add("admitted " + lane + " #" + sequence);
        }

        @Override
        public void visible(long sequence) {
            events.add("visible #" + sequence);
        }

        /** @return what was recorded, in order ("admitted LANE #SEQ", "visible #SEQ") */
        public List<String> events() {
            return List.copyOf(events);
        }

        /** @return whether the request was posted by the calling thread (admitted on lane -1), once */
        public boolean postedByCaller() {
            return events.size() == 1 && events.get(0).startsWith("admitted -1 #");
        }
    }

    private static <T> T await(CompletionStage<T> s) throws Exception {
        return s.toCompletableFuture().get(TIMEOUT_S, TimeUnit.SECONDS);
    }

    /**
     * Fetch-adds one at a time until the calling thread posts one itself: the actor publishes the
     * grant as it goes idle, which may be a moment after the answer that made it idle.
     *
     * @param ep the endpoint
     * @param at the counter's address
     * @param key its key
     * @param counter what the counter holds now
     * @return what it holds after
     * @throws Exception if no call within 50 is posted by the caller, or one fails
     */
    public static long untilPosted(Endpoint ep, long at, RemoteKey key, long counter) throws Exception {
        long next = counter;
        List<String> seen = new ArrayList<>();
        while (true) {
            Trace trace = new Trace();
            long now = next;
            CompletionStage<Long> call = RequestTrace.during(trace, () -> ep.atomicFetch64(AtomicOp.ADD, at, key, 1));
            assertEquals(now, await(call));
            next++;
            seen.add(trace.events().toString());
            if (trace.postedByCaller()) {
                return next;
            }
            assertTrue(next - counter < 50, "never posted by the caller: " + seen);
        }
    }

    /**
     * Posts a window of fetch-adds of 1 on a counter without waiting, the first one traced.
     *
     * @param ep the endpoint
     * @param at the counter's address
     * @param key its key
     * @param window how many
     * @param first records what the endpoint did with the first one
     * @return their futures, in call order
     */
    public static List<CompletableFuture<Long>> fetchAddWindow(Endpoint ep, long at, RemoteKey key, int window,
            Trace first) {
        List<CompletableFuture<Long>> posted = new ArrayList<>();
        posted.add(RequestTrace.during(first, () -> ep.atomicFetch64(AtomicOp.ADD, at, key, 1)).toCompletableFuture());
        for (int i = 1; i < window; i++) {
            posted.add(ep.atomicFetch64(AtomicOp.ADD, at, key, 1).toCompletableFuture());
        }
        return posted;
    }

    /**
     * Waits for a window of fetch-adds on a counter that held {@code from}: each fetches a value of
     * its own, all in {@code [from, from + window)}.
     *
     * @param posted the window's futures
     * @param from what the counter held before the window
     * @throws Exception if one fails, times out, or fetches a value outside or twice
     */
    public static void fetchedOnceEach(List<CompletableFuture<Long>> posted, long from) throws Exception {
        Set<Long> seen = new HashSet<>();
        for (CompletableFuture<Long> p : posted) {
            long v = p.get(TIMEOUT_S, TimeUnit.SECONDS);
            assertTrue(v >= from && v < from + posted.size(), "fetched " + v);
            assertTrue(seen.add(v), "value " + v + " fetched twice: " + seen);
        }
    }

    /**
     * An idle endpoint's caller posts fetch-adds, puts (with a future and implicit), gets and 4-byte
     * compare-and-swaps itself; a fetch-add's callback runs before that of a flush issued after it;
     * a refusal at the target (a closed region) fails the call with its typed error and the endpoint
     * serves on; at least 200 calls went on the fast path and nothing is left outstanding.
     *
     * @param target the worker the endpoint reaches
     * @param origin the endpoint's worker
     * @param ep the endpoint, with nothing of its own outstanding
     * @throws Exception if a check fails
     */
    public static void callersPostAndCallbacksRunInAnswerOrder(Worker origin, Worker target, Endpoint ep)
            throws Exception {
        MemoryRegion region = target.allocate(4096);
        RemoteKey key = origin.unpackRemoteKey(region.remoteKey().toBytes());
        long base = region.address();
        await(ep.flush());
        for (long i = untilPosted(ep, base, key, 0); i < 200; i++) {
            assertEquals(i, await(ep.atomicFetch64(AtomicOp.ADD, base, key, 1)), "fetch-add " + i);
        }
        ByteBuffer src = ByteBuffer.allocateDirect(64);
        for (int i = 0; i < 64; i++) {
            src.put(i, (byte) (i + 1));
        }
        await(ep.put(src, base + 512, key));
        ep.putImplicit(src, base + 1024, key);
        await(ep.flush());
        ByteBuffer dst = ByteBuffer.allocateDirect(64);
        await(ep.get(dst, base + 1024, key));
        assertEquals(src, dst, "the implicit put, read back by a posted get");
        assertEquals(0, await(ep.compareAndSwap32(base + 8, key, 0, 2)));
        assertEquals(2, await(ep.compareAndSwap32(base + 8, key, 0, 3)), "not swapped: 2 is not 0");

        // Callbacks run in completion order (on the thread that read the answers): an operation's
        // before the callback of a flush issued after it.
        List<String> order = new CopyOnWriteArrayList<>();
        ep.atomicFetch64(AtomicOp.ADD, base, key, 1).thenRun(() -> order.add("fetch-add"));
        await(ep.flush().thenRun(() -> order.add("flush")));
        assertEquals(List.of("fetch-add", "flush"), order);

        // A refusal at the target fails the call with a typed error; the endpoint serves on.
        MemoryRegion closed = target.allocate(4096);
        RemoteKey closedKey = origin.unpackRemoteKey(closed.remoteKey().toBytes());
        await(ep.put(src, closed.address(), closedKey));
        closed.close();
        ExecutionException bad = assertThrows(ExecutionException.class,
                () -> await(ep.atomicFetch64(AtomicOp.ADD, closed.address(), closedKey, 1)));
        RemoteAccessException refused = assertInstanceOf(RemoteAccessException.class, bad.getCause(), bad.toString());
        assertEquals(RemoteAccessException.Reason.REGION_CLOSED, refused.reason());
        assertEquals(201L, await(ep.atomicFetch64(AtomicOp.ADD, base, key, 1)));
        var stats = ep.statistics();
        assertTrue(stats.fastPath() >= 200, "posted by callers: " + stats);
        assertEquals(0, stats.outstanding(), stats.toString());
    }

    /**
     * Several threads share one endpoint: each runs a seeded random mix of fetch-adds on one counter
     * (posted while the grant holds), puts too large to post (through the actor, which waits for
     * every posted operation first) and flushes. Every fetch-add is applied once and fetches a
     * distinct value; every flush covers its thread's puts. The caller prints the seed.
     *
     * @param origin the endpoint's worker
     * @param target the worker it reaches
     * @param ep the endpoint
     * @param seed the seed (thread {@code t} uses {@code seed + t})
     * @param threads how many threads
     * @param perThread calls per thread
     * @throws Exception if a check fails
     */
    public static void threadsPostingAndSubmittingKeepEveryOperationOnce(Worker origin, Worker target, Endpoint ep,
            long seed, int threads, int perThread) throws Exception {
        MemoryRegion region = target.allocate(threads * 8192L + 64);
        RemoteKey key = origin.unpackRemoteKey(region.remoteKey().toBytes());
        long counter = region.address();
        List<CompletableFuture<List<Long>>> runs = new ArrayList<>();
        for (int t = 0; t < threads; t++) {
            int id = t;
            Random random = new Random(seed + t);
            runs.add(CompletableFuture.supplyAsync(() -> {
                try {
                    return mix(ep, key, counter, counter + 64 + id * 8192L, id, random, perThread);
                } catch (Exception e) {
                    throw new CompletionException(e);
                }
            }));
        }
        Set<Long> all = new HashSet<>();
        int total = 0;
        for (CompletableFuture<List<Long>> r : runs) {
            List<Long> fetched = r.get(90, TimeUnit.SECONDS);
            total += fetched.size();
            for (long v : fetched) {
                assertTrue(all.add(v), "value " + v + " fetched twice (seed " + seed + ")");
            }
        }
        assertEquals(total, await(ep.atomicFetch64(AtomicOp.ADD, counter, key, 0)),
                "every fetch-add applied once (seed " + seed + ")");
        for (long v = 0; v < total; v++) {
            assertTrue(all.contains(v), "value " + v + " never fetched (seed " + seed + ")");
        }
        var stats = ep.statistics();
        assertTrue(stats.fastPath() > 0, "some were posted by the callers: " + stats);
        assertEquals(0, stats.outstanding(), stats.toString());
    }

    /** One thread's calls: @return the values its fetch-adds fetched */
    private static List<Long> mix(Endpoint ep, RemoteKey key, long counter, long slot, int id, Random random,
            int calls) throws Exception {
        List<Long> fetched = new ArrayList<>();
        List<CompletableFuture<Long>> window = new ArrayList<>();
        ByteBuffer big = ByteBuffer.allocateDirect(4096).order(ByteOrder.nativeOrder());
        for (int i = 0; i < calls; i++) {
            if (random.nextInt(100) < 3) {
                big.putLong(0, i);
                await(ep.put(big, slot, key)); // too large to post: the actor's
                await(ep.flush());
                ByteBuffer back = ByteBuffer.allocateDirect(8).order(ByteOrder.nativeOrder());
                await(ep.get(back, slot, key));
                assertEquals(i, back.getLong(0), "thread " + id + " put " + i + " after its flush");
            } else {
                window.add(ep.atomicFetch64(AtomicOp.ADD, counter, key, 1).toCompletableFuture());
            }
            if (window.size() >= 1 + random.nextInt(16)) {
                for (CompletableFuture<Long> w : window) {
                    fetched.add(w.get(TIMEOUT_S, TimeUnit.SECONDS));
                }
                window.clear();
            }
        }
        for (CompletableFuture<Long> w : window) {
            fetched.add(w.get(TIMEOUT_S, TimeUnit.SECONDS));
        }
        return fetched;
    }
}
