package dev.fenceline.testkit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.fenceline.AtomicOp;
import dev.fenceline.Endpoint;
import dev.fenceline.Fenceline;
import dev.fenceline.MemoryRegion;
import dev.fenceline.RemoteKey;
import dev.fenceline.Worker;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * The fence engine end to end, on the sim transport: UCX's fence property for atomics and the RMA
 * ordering test, over one lane and over two reordering lanes, in modes endpoint and strong (and
 * weak where it is legal), and proof that the same loops fail without the fence.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class FenceOrderingTest {
    private static final int ROUNDS = 500;

    /** One runtime, two workers, one endpoint, one target region. */
    record Setup(Fenceline fenceline, Worker a, Worker b, Endpoint ep, MemoryRegion region, RemoteKey key)
            implements AutoCloseable {
        static Setup of(String lanes, String mode, int bytes) throws Exception {
            // The fence machinery itself: on the fast path an idle one-lane endpoint needs no fence
            // at all (each operation is complete on return), so these run without it.
            Fenceline f = Fenceline.create(com.typesafe.config.ConfigFactory.parseString(
                    "fenceline.transport.sim.direct-access = off").withFallback(SimConfigs.of(SimConfigs.lanes(lanes),
                            mode, 1)));
            try {
                Worker a = f.newWorker("origin").toCompletableFuture().get(10, TimeUnit.SECONDS);
                Worker b = f.newWorker("target").toCompletableFuture().get(10, TimeUnit.SECONDS);
                MemoryRegion r = b.allocate(bytes);
                Endpoint ep = a.connect(b.address()).toCompletableFuture().get(10, TimeUnit.SECONDS);
                return new Setup(f, a, b, ep, r, a.unpackRemoteKey(r.remoteKey().toBytes()));
            } catch (Exception | Error e) {
                f.close();
                throw e;
            }
        }

        @Override
        public void close() {
            fenceline.close();
        }
    }

    static <T> T await(java.util.concurrent.CompletionStage<T> s) throws Exception {
        return s.toCompletableFuture().get(30, TimeUnit.SECONDS);
    }

    /**
     * 500 x { post ADD(+1); fence; FETCH_ADD(0) } must return i+1 every time. The ADD is not awaited
     * (a post completes on its own), so only the fence orders it before the fetch.
     *
     * @return how many fetches saw a value other than i+1
     */
    static int addFenceFetch(Setup s, int width, boolean fence) throws Exception {
        long addr = s.region().address();
        List<CompletableFuture<Void>> posts = new ArrayList<>();
        int violations = 0;
        for (int i = 0; i < ROUNDS; i++) {
            long got;
            if (width == 4) {
                posts.add(s.ep().atomicPost32(AtomicOp.ADD, addr, s.key(), 1).toCompletableFuture());
                if (fence) {
                    s.ep().fence();
                }
                got = await(s.ep().atomicFetch32(AtomicOp.ADD, addr, s.key(), 0));
            } else {
                posts.add(s.ep().atomicPost64(AtomicOp.ADD, addr, s.key(), 1).toCompletableFuture());
                if (fence) {
                    s.ep().fence();
                }
                got = await(s.ep().atomicFetch64(AtomicOp.ADD, addr, s.key(), 0));
            }
            if (got != i + 1) {
                violations++;
            }
        }
        CompletableFuture.allOf(posts.toArray(new CompletableFuture<?>[0])).get(30, TimeUnit.SECONDS);
        await(s.ep().flush());
        long end = width == 4 ? s.region().buffer().order(java.nio.ByteOrder.nativeOrder()).getInt(0)
                : s.region().buffer().order(java.nio.ByteOrder.nativeOrder()).getLong(0);
        assertEquals(ROUNDS, end, "every ADD applied exactly once");
        return violations;
    }

    @ParameterizedTest(name = "{0}, mode {1}, {2}-byte")
    @CsvSource({"one-lane, endpoint, 4", "one-lane, endpoint, 8", "one-lane, strong, 4", "one-lane, strong, 8",
        "one-lane, weak, 4", "one-lane, weak, 8", "two-lanes, endpoint, 4", "two-lanes, endpoint, 8",
        "two-lanes, strong, 4", "two-lanes, strong, 8"})
    void addFenceFetchAddHolds(String lanes, String mode, int width) throws Exception {
        try (Setup s = Setup.of(lanes, mode, 64)) {
            assertEquals(0, addFenceFetch(s, width, true), "fetches that overtook the fenced ADD");
            var stats = s.a().statistics();
            if (lanes.equals("two-lanes") && !mode.equals("weak")) {
                assertTrue(stats.strongFences() > 0, "atomics alternate rails: fences must be strong " + stats);
            } else if (mode.equals("endpoint")) {
                assertTrue(stats.weakFences() > 0 && stats.strongFences() == 0, "one lane: weak fences " + stats);
            }
        }
    }

    @Test
    void withoutTheFenceTheSameLoopFailsOnReorderingLanes() throws Exception {
        try (Setup s = Setup.of("two-lanes", "endpoint", 64)) {
            int violations = addFenceFetch(s, 8, false);
            assertTrue(violations > 0, "500 unfenced ADD/FETCH_ADD pairs on two reordering lanes never reordered");
        }
    }

    /**
     * For sizes 1 B to 1 MiB, 50 x { put S bytes of 0x7F; fence; put byte i to the first and the
     * last byte; flush } leaves i in both.
     *
     * @return rounds where a byte was not i
     */
    static int rmaOrdering(Setup s, boolean fence, int[] sizes, int rounds) throws Exception {
        int violations = 0;
        long base = s.region().address();
        for (int size : sizes) {
            ByteBuffer big = ByteBuffer.allocateDirect(size);
            for (int k = 0; k < size; k++) {
                big.put(k, (byte) 0x7F);
            }
            for (int i = 0; i < rounds; i++) {
                s.ep().put(big.duplicate(), base, s.key());
                if (fence) {
                    s.ep().fence();
                }
                s.ep().put(ByteBuffer.wrap(new byte[] {(byte) i}), base, s.key());
                s.ep().put(ByteBuffer.wrap(new byte[] {(byte) i}), base + size - 1, s.key());
                await(s.ep().flush());
                ByteBuffer mem = s.region().buffer();
                if (mem.get(0) != (byte) i || mem.get(size - 1) != (byte) i) {
                    violations++;
                }
            }
        }
        return violations;
    }

    @ParameterizedTest(name = "{0}, mode {1}")
    @CsvSource({"one-lane, endpoint", "one-lane, strong", "one-lane, weak", "two-lanes, endpoint",
        "two-lanes, strong"})
    void rmaOrderingHoldsForEverySize(String lanes, String mode) throws Exception {
        int[] sizes = {1, 8, 64, 512, 4096, 32 * 1024, 256 * 1024, 1 << 20};
        try (Setup s = Setup.of(lanes, mode, 1 << 20)) {
            assertEquals(0, rmaOrdering(s, true, sizes, 50));
        }
    }

    @Test
    void withoutTheFenceBulkAndShortPutsReorder() throws Exception {
        try (Setup s = Setup.of("two-lanes", "endpoint", 1 << 20)) {
            assertTrue(rmaOrdering(s, false, new int[] {1 << 20}, 50) > 0,
                    "a 1 MiB put on the bulk lane never landed after the 1-byte puts on the short lane");
        }
    }
}
