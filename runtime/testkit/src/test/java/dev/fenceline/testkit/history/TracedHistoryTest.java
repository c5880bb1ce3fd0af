package dev.fenceline.testkit.history;

import static org.junit.jupiter.api.Assertions.assertDoesNotThrow;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.fenceline.AtomicOp;
import dev.fenceline.Endpoint;
import dev.fenceline.Fenceline;
import dev.fenceline.MemoryRegion;
import dev.fenceline.RemoteKey;
import dev.fenceline.Worker;
import dev.fenceline.testkit.SimNetwork;
import dev.fenceline.testkit.junit.FencelineTest;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Proxy;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * The history's inside view on the sim: each request's admission and remote visibility are
 * recorded, and the checker uses them to catch a broken fence that no read observed and a fragment
 * the target applied twice.
 */
@FencelineTest(config = "fenceline.transport.sim.max-fragment = 16KiB\n"
        + "fenceline.transport.sim.lanes = ["
        + "{ types = [AM, RMA, AMO], min-delay = 0us, max-delay = 20us },"
        + "{ types = [AM, RMA_BW, AMO], min-delay = 0us, max-delay = 20us } ]")
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class TracedHistoryTest {
    private static final AtomicInteger PAIRS = new AtomicInteger();

    private record Pair(Endpoint ep, MemoryRegion region, RemoteKey key) {
        static Pair of(Fenceline f) throws Exception {
            int n = PAIRS.incrementAndGet();
            Worker a = f.newWorker("traced-a" + n).toCompletableFuture().get(10, TimeUnit.SECONDS);
            Worker b = f.newWorker("traced-b" + n).toCompletableFuture().get(10, TimeUnit.SECONDS);
            MemoryRegion r = b.allocate(1 << 20);
            Endpoint ep = a.connect(b.address()).toCompletableFuture().get(10, TimeUnit.SECONDS);
            return new Pair(ep, r, a.unpackRemoteKey(r.remoteKey().toBytes()));
        }
    }

    private static <T> T await(CompletionStage<T> s) throws Exception {
        return s.toCompletableFuture().get(20, TimeUnit.SECONDS);
    }

    /** The endpoint with {@code fence()} dropped: the application's bug under test. */
    private static Endpoint withoutFences(Endpoint ep) {
        return (Endpoint) Proxy.newProxyInstance(Endpoint.class.getClassLoader(), new Class<?>[] {Endpoint.class},
                (proxy, m, args) -> {
                    if (m.getName().equals("fence")) {
                        return null;
                    }
                    try {
                        return m.invoke(ep, args);
                    } catch (InvocationTargetException e) {
                        throw e.getCause();
                    }
                });
    }

    @Test
    void eachRequestIsSeenIssuedAdmittedAppliedAndCompleted(Fenceline f) throws Exception {
        Pair p = Pair.of(f);
        History h = new History();
        Endpoint ep = h.record(p.ep());
        await(ep.put(ByteBuffer.allocate(64), p.region().address(), p.key()));
        await(ep.atomicFetch64(AtomicOp.ADD, p.region().address() + 4096, p.key(), 2));
        await(ep.put(ByteBuffer.allocate(100_000), p.region().address() + 8192, p.key())); // fragments on lane 1
        await(ep.flush());
        for (Op op : h.ops()) {
            List<Event.Kind> kinds = h.events(op).stream().map(Event::kind).toList();
            assertEquals(Event.Kind.ISSUED, kinds.get(0), op + ": " + kinds);
            assertEquals(Event.Kind.COMPLETED, kinds.get(kinds.size() - 1), op + ": " + kinds);
            if (op.kind() != Op.Kind.FLUSH) {
                long admitted = kinds.stream().filter(k -> k == Event.Kind.ADMITTED).count();
                long visible = kinds.stream().filter(k -> k == Event.Kind.VISIBLE).count();
                assertTrue(admitted >= 1 && admitted == visible, op + " admitted " + admitted + ", visible " + visible);
                assertTrue(kinds.indexOf(Event.Kind.ADMITTED) < kinds.indexOf(Event.Kind.VISIBLE), op + ": " + kinds);
            }
        }
        Op big = h.ops().get(2);
        assertTrue(h.events(big).stream().filter(e -> e.kind() == Event.Kind.VISIBLE).count() > 1,
                "the 100,000-byte put went in fragments: " + h.events(big));
        HistoryChecker.of(h).assertEveryRequestCompleted().assertFlushesCovered().assertFencesHeld()
                .assertExactlyOnce(a -> p.region().buffer().order(ByteOrder.nativeOrder()).getLong((int) (a
                        - p.region().address())));
    }

    /**
     * A bulk put, a fence, then a small put elsewhere: without the fence the small one lands first
     * (the bulk lane is slow). No read follows, so only the visibility order can tell.
     */
    private static History fencedWrites(Pair p, SimNetwork net, boolean dropFences) throws Exception {
        net.setDelay(p.ep(), 1, Duration.ofMillis(30), Duration.ofMillis(30));
        History h = new History();
        Endpoint ep = h.record(dropFences ? withoutFences(p.ep()) : p.ep());
        CompletionStage<Void> bulk = ep.put(ByteBuffer.allocate(64 * 1024), p.region().address(), p.key());
        ep.fence();
        CompletionStage<Void> small = ep.put(ByteBuffer.allocate(8), p.region().address() + 512 * 1024, p.key());
        await(bulk);
        await(small);
        await(ep.flush());
        return h;
    }

    @Test
    void aDroppedFenceIsCaughtEvenWhenNoReadObservesIt(Fenceline f, SimNetwork net) throws Exception {
        History honest = fencedWrites(Pair.of(f), net, false);
        assertDoesNotThrow(() -> HistoryChecker.of(honest).assertFencesHeld().assertFlushesCovered());

        History broken = fencedWrites(Pair.of(f), net, true);
        AssertionError e = assertThrows(AssertionError.class, () -> HistoryChecker.of(broken).assertFencesHeld());
        assertTrue(e.getMessage().contains("was applied before #1 PUT"), e.getMessage());
    }

    /** An ADD applied, its lane failed before the acknowledgement came back, and the endpoint re-sent it. */
    private static History resentAdd(Pair p, SimNetwork net) throws Exception {
        net.setDelay(p.ep(), 0, Duration.ofMillis(300), Duration.ofMillis(300)); // the acknowledgement takes as long
        History h = new History();
        Endpoint ep = h.record(p.ep());
        CompletionStage<Void> add = ep.atomicPost64(AtomicOp.ADD, p.region().address(), p.key(), 5);
        Op op = h.ops().get(0);
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        while (h.events(op).stream().noneMatch(e -> e.kind() == Event.Kind.VISIBLE)) {
            assertTrue(System.nanoTime() < deadline, "the ADD was never applied: " + h.events(op));
            Thread.sleep(1);
        }
        assertEquals(0, h.events(op).stream().filter(e -> e.kind() == Event.Kind.ADMITTED && e.lane() != 0).count(),
                "the ADD went to lane 0 first: " + h.events(op));
        net.failLane(p.ep(), 0); // the acknowledgement is still 300 ms away: it is lost with the lane
        await(add);
        await(ep.flush());
        return h;
    }

    @Test
    void aFragmentAppliedTwiceIsCaught(Fenceline f, SimNetwork net) throws Exception {
        Pair ok = Pair.of(f);
        History honest = resentAdd(ok, net);
        assertTrue(honest.events(honest.ops().get(0)).stream().filter(e -> e.kind() == Event.Kind.ADMITTED).count() == 2,
                "the ADD was re-sent after the failure: " + honest.events(honest.ops().get(0)));
        assertDoesNotThrow(() -> HistoryChecker.of(honest).assertExactlyOnce(a -> 5));

        Pair bad = Pair.of(f);
        net.breakDeduplication(bad.ep().peer());
        History broken = resentAdd(bad, net);
        AssertionError e = assertThrows(AssertionError.class,
                () -> HistoryChecker.of(broken).assertExactlyOnce(a -> 5)); // 5 is the honest value: only visibility tells
        assertTrue(e.getMessage().contains("twice"), e.getMessage());
    }
}
