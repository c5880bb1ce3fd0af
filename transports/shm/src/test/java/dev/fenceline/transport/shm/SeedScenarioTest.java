package dev.fenceline.transport.shm;

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
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * The scenario of the upstream pull request this project grew from, on a real two-lane shm endpoint
 * (an AM lane with software atomics, and a cma RMA_BW lane) in endpoint fence mode: 500 rounds of a
 * bulk put, ADD, fence, FETCH_ADD, with the cma lane replaced while they run. Nothing blocks (every
 * round completes), every ADD is applied exactly once (the counter ends at 500 and each FETCH_ADD
 * after its fence sees its own ADD and at most the next round's, which no fence holds back), and
 * every bulk put landed.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class SeedScenarioTest {
    private static final int ROUNDS = 500;
    private static final int BLOCK = 32 << 10; // above the bandwidth threshold: the cma lane

    @Test
    void addFenceFetchAddWhileTheCmaLaneIsReplaced() throws Exception {
        try (Fenceline f = Fenceline.create(ConfigFactory.parseString("""
                fenceline.transports = [shm]
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
                    CmaLane cma = CmaLane.byId(ep.lanes().get(1).connectionId());
                    assertNotNull(cma, "the cma lane is live");
                    cma.owner().replace(cma); // a reconfiguration message, handled in order
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
                            // After the fence the round's own ADD (and every earlier one) is in. The next
                            // round's ADD is not fenced from this FETCH_ADD, so it may be in too; the one
                            // after that is behind the next fence, so it cannot be.
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
            assertTrue(ep.lanes().get(1).live());
            assertTrue(ep.lanes().get(1).connectionId() != cmaBefore, "the cma lane was replaced");
            var stats = a.statistics();
            assertEquals(0, stats.failed(), stats.toString());
            assertTrue(stats.reconfigurations() >= 1, stats.toString());
        }
    }
}
