package dev.fenceline.testkit.history;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.fenceline.Endpoint;
import dev.fenceline.Fenceline;
import dev.fenceline.MemoryRegion;
import dev.fenceline.RemoteKey;
import dev.fenceline.Worker;
import dev.fenceline.testkit.SimNetwork;
import dev.fenceline.testkit.junit.FencelineTest;
import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * A lane without deduplication ({@code protocol = hw}) re-sends restarted puts, which the target then
 * applies again: legitimate (puts are idempotent), so the visibility checks must not call it a
 * double application or a broken fence.
 */
// Without the fast path: the puts must travel the lane (and be re-sent when it is replaced).
@FencelineTest(config = "fenceline.transport.sim.direct-access = off\nfenceline.transport.sim.lanes = ["
        + "{ types = [AM, RMA, AMO], min-delay = 0us, max-delay = 20us, protocol = hw },"
        + "{ types = [RMA_BW], min-delay = 0us, max-delay = 20us } ]")
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class TracedHistoryHwLaneTest {
    private static <T> T await(CompletionStage<T> s) throws Exception {
        return s.toCompletableFuture().get(20, TimeUnit.SECONDS);
    }

    @Test
    void resentPutsOnALaneWithoutDeduplicationAreNoViolation(Fenceline f, SimNetwork net) throws Exception {
        Worker a = await(f.newWorker("hw-a"));
        Worker b = await(f.newWorker("hw-b"));
        MemoryRegion r = b.allocate(1 << 16);
        Endpoint raw = await(a.connect(b.address()));
        RemoteKey key = a.unpackRemoteKey(r.remoteKey().toBytes());
        net.setDelay(raw, 0, Duration.ofMillis(300), Duration.ofMillis(300)); // acks take 300 ms too
        History h = new History();
        Endpoint ep = h.record(raw);
        CompletionStage<Void> p1 = ep.put(ByteBuffer.allocate(8), r.address(), key);
        ep.fence();
        CompletionStage<Void> p2 = ep.put(ByteBuffer.allocate(8), r.address() + 64, key);
        Op op1 = h.ops().get(0);
        Op op2 = h.ops().get(2);
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        while (h.events(op2).stream().noneMatch(e -> e.kind() == Event.Kind.VISIBLE)) {
            assertTrue(System.nanoTime() < deadline, "not applied: " + h.events(op2));
            Thread.sleep(1);
        }
        assertEquals(1, h.events(op1).stream().filter(e -> e.kind() == Event.Kind.VISIBLE).count());
        assertTrue(h.events(op2).stream().allMatch(e -> e.kind() != Event.Kind.ADMITTED || e.lane() == 0));
        // a new connection in slot 0: both acks are lost; PUTs are idempotent, so the endpoint re-sends them
        net.replaceLane(raw, 0);
        await(p1);
        await(p2);
        await(ep.flush());
        assertEquals(2, h.events(op1).stream().filter(e -> e.kind() == Event.Kind.VISIBLE).count(),
                "the target applied the re-sent put again: " + h.events(op1));
        HistoryChecker.of(h).assertEveryRequestCompleted().assertFlushesCovered().assertFencesHeld()
                .assertExactlyOnce(x -> 0);
    }
}
