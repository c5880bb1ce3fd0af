package dev.fenceline.transport.ucx;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.typesafe.config.ConfigFactory;
import dev.fenceline.AtomicOp;
import dev.fenceline.Endpoint;
import dev.fenceline.Fenceline;
import dev.fenceline.LaneType;
import dev.fenceline.MemoryRegion;
import dev.fenceline.RemoteKey;
import dev.fenceline.Worker;
import java.nio.ByteBuffer;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * The scenario of the upstream pull request this project grew from, rebuilt on UCT: an AM lane
 * (posix) whose atomics are software ones (the counter is registered memory, which posix does not
 * reach, so each atomic is a message the target applies) and a bulk RMA lane (cma), in endpoint fence
 * mode: 500 rounds of a bulk put, ADD, fence, FETCH_ADD, with the cma lane replaced (a new UCT
 * endpoint and connection behind its slot) while they run. Nothing blocks (every round completes,
 * no flush runs inside the replay), every ADD is applied exactly once (the counter ends at 500, and
 * each FETCH_ADD after its fence sees its own ADD and at most the next round's), and every bulk put
 * landed.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class UcxSeedScenarioTest {
    private static final int ROUNDS = 500;
    private static final int BLOCK = 32 << 10; // above the bandwidth threshold: the cma lane

    @BeforeAll
    static void ucx() {
        UcxAssumptions.ucxAvailable();
    }

    @Test
    void addFenceFetchAddWhileTheBulkLaneIsReplaced() throws Exception {
        try (Fenceline f = Fenceline.create(ConfigFactory.parseString("""
                fenceline.transports = [ucx]
                fenceline.transport.ucx.tls = [posix, cma]
                fenceline.fence.mode = endpoint
                """))) {
            Worker a = f.newWorker("origin").toCompletableFuture().get(10, TimeUnit.SECONDS);
            Worker b = f.newWorker("target").toCompletableFuture().get(10, TimeUnit.SECONDS);
            ByteBuffer counterMemory = ByteBuffer.allocateDirect(64).order(java.nio.ByteOrder.nativeOrder());
            ByteBuffer blocks = ByteBuffer.allocateDirect(8 * BLOCK);
            MemoryRegion counterRegion = b.register(counterMemory);
            MemoryRegion blockRegion = b.register(blocks);
            RemoteKey counter = a.unpackRemoteKey(counterRegion.remoteKey().toBytes());
            RemoteKey data = a.unpackRemoteKey(blockRegion.remoteKey().toBytes());
            Endpoint ep = a.connect(b.address()).toCompletableFuture().get(10, TimeUnit.SECONDS);
            assertEquals(2, ep.lanes().size(), "an AM lane and a cma lane: " + ep.lanes());
            assertEquals(Set.of(LaneType.RMA_BW), ep.lanes().get(1).types());
            long cmaBefore = ep.lanes().get(1).connectionId();

            ConcurrentLinkedQueue<String> errors = new ConcurrentLinkedQueue<>();
            CompletableFuture<?>[] rounds = new CompletableFuture<?>[ROUNDS];
            for (int i = 0; i < ROUNDS; i++) {
                if (i == ROUNDS / 2) {
                    UcxLane cma = UcxLane.byId(ep.lanes().get(1).connectionId());
                    assertNotNull(cma, "the cma lane is live");
                    cma.replace(); // a reconfiguration message, handled in order
                }
                ByteBuffer block = ByteBuffer.allocateDirect(BLOCK);
                for (int k = 0; k < BLOCK; k += 8) {
                    block.putLong(k, i);
                }
                CompletableFuture<Void> put = ep.put(block, data.baseAddress() + (long) (i % 8) * BLOCK, data)
                        .toCompletableFuture();
                CompletableFuture<Void> add = ep.atomicPost64(AtomicOp.ADD, counter.baseAddress(), counter, 1)
                        .toCompletableFuture();
                ep.fence();
                int round = i;
                CompletableFuture<Long> fetch = ep.atomicFetch64(AtomicOp.ADD, counter.baseAddress(), counter, 0)
                        .toCompletableFuture().whenComplete((v, e) -> {
                            if (e == null && v != round + 1 && v != round + 2) {
                                errors.add("round " + round + ": FETCH_ADD after the fence saw " + v);
                            }
                        });
                rounds[i] = CompletableFuture.allOf(put, add, fetch);
            }
            CompletableFuture.allOf(rounds).get(30, TimeUnit.SECONDS);
            ep.flush().toCompletableFuture().get(10, TimeUnit.SECONDS);
            assertEquals(List.of(), List.copyOf(errors));
            assertEquals(ROUNDS, counterMemory.getLong(0), "every ADD applied exactly once");
            for (int s = 0; s < 8; s++) {
                long last = s + 8L * ((ROUNDS - 1 - s) / 8); // the last round that wrote block s
                assertEquals(last, blocks.getLong(s * BLOCK), "block " + s);
                assertEquals(last, blocks.getLong(s * BLOCK + BLOCK - 8), "block " + s);
            }
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
            while (ep.lanes().get(1).connectionId() == cmaBefore && System.nanoTime() < deadline) {
                Thread.onSpinWait(); // the replacement is a message on its way: its wireup may finish after the rounds
            }
            assertTrue(ep.lanes().get(1).live());
            assertTrue(ep.lanes().get(1).connectionId() != cmaBefore, "the cma lane was replaced");
            var stats = a.statistics();
            assertEquals(0, stats.failed(), stats.toString());
            assertTrue(stats.reconfigurations() >= 1, stats.toString());
        }
    }
}
