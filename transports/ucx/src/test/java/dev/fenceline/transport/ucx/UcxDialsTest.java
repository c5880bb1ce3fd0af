package dev.fenceline.transport.ucx;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.fenceline.Endpoint;
import dev.fenceline.EndpointFailedException;
import dev.fenceline.Fenceline;
import dev.fenceline.Worker;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import org.agrona.collections.Long2ObjectHashMap;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * A CONNECTED whose get bounds do not fit the connect's lanes ends the connect, end to end: worker a
 * dials b while b's progress thread is held (so b's own answer waits), and c sends a a CONNECTED
 * with the connect's wire id (read on a's agent thread; a peer would have to see the CONNECT to
 * know it). The connect fails naming the bounds, as a connect that timed out: its channels stay,
 * b's real answer later is ignored, and the next connect to b succeeds.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class UcxDialsTest {
    @BeforeAll
    static void ucx() {
        UcxAssumptions.ucxAvailable();
    }

    /** @return the wire ids of a's connects in flight, read on a's agent thread (in a's handler 2) */
    private static long[] dialsInFlight(WireupForgery g) throws Exception {
        UcxLane aLane = UcxLane.byId(g.ac().lanes().get(0).connectionId());
        assertTrue(aLane != null, "a's UCT lane to c is live");
        UcxWiring atA = WireupForgery.wiring(aLane);
        java.lang.reflect.Field dialsField = UcxWiring.class.getDeclaredField("dials");
        dialsField.setAccessible(true);
        java.lang.reflect.Field mapField = UcxDials.class.getDeclaredField("dials");
        mapField.setAccessible(true);
        UcxDials dials = (UcxDials) dialsField.get(atA);
        AtomicReference<long[]> ids = new AtomicReference<>();
        g.a().setActiveMessageHandler(2, (h, p) -> {
            try {
                Long2ObjectHashMap<?> m = (Long2ObjectHashMap<?>) mapField.get(dials);
                long[] out = new long[m.size()];
                int i = 0;
                for (Long2ObjectHashMap<?>.KeyIterator it = m.keySet().iterator(); it.hasNext();) {
                    out[i++] = it.nextLong();
                }
                ids.set(out);
            } catch (IllegalAccessException e) {
                g.failed().set(e);
            }
        });
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        do {
            assertTrue(System.nanoTime() < deadline, "a's connect never reached its agent");
            WireupForgery.await(g.ca().sendActiveMessage(2, null, null));
            assertTrue(g.failed().get() == null, String.valueOf(g.failed().get()));
        } while (ids.get() == null || ids.get().length < 1);
        return ids.get();
    }

    @ParameterizedTest
    @ValueSource(strings = {"no bounds", "too many bounds", "a bound below any message"})
    void aConnectedWhoseBoundsDoNotFitTheLanesEndsTheConnect(String which) throws Exception {
        try (Fenceline f = WireupForgery.posix()) {
            WireupForgery g = WireupForgery.open(f);
            Worker b = WireupForgery.await(f.newWorker("b"));
            HeldHandler held = new HeldHandler();
            b.setActiveMessageHandler(5, held);
            Endpoint first = WireupForgery.await(g.a().connect(b.address()));
            first.sendActiveMessage(5, null, null); // b's progress thread waits in the handler from now
            assertTrue(held.entered.await(20, TimeUnit.SECONDS), "b's handler holds its progress thread");
            CompletableFuture<Endpoint> second = g.a().connect(b.address()).toCompletableFuture();
            String expected;
            try {
                long[] ids = dialsInFlight(g);
                assertEquals(1, ids.length, "a has one connect in flight");
                int lanes = first.lanes().size();
                List<Integer> bounds = switch (which) {
                    case "no bounds" -> List.of();
                    case "too many bounds" -> java.util.Collections.nCopies(lanes + 1, 65_000);
                    default -> java.util.Collections.nCopies(lanes, UcxWireup.MIN_GET_BOUND - 1);
                };
                expected = switch (which) {
                    case "no bounds" -> "get bounds for 0 lane(s), where it opened " + lanes;
                    case "too many bounds" -> "get bounds for " + (lanes + 1) + " lane(s), where it opened " + lanes;
                    default -> "gets of at most " + (UcxWireup.MIN_GET_BOUND - 1) + " bytes on lane 0";
                };
                g.send(new UcxWireup.Connected(ids[0], List.of(), bounds));
                ExecutionException e = assertThrows(ExecutionException.class, () -> second.get(20, TimeUnit.SECONDS));
                assertInstanceOf(EndpointFailedException.class, e.getCause());
                assertTrue(e.getCause().getMessage().contains(expected), e.getCause().getMessage());
            } finally {
                held.release();
            }
            // b's own answer to the failed connect comes now and is ignored; a's channels to b stayed,
            // and the next connect goes through.
            Endpoint third = WireupForgery.await(g.a().connect(b.address()));
            WireupForgery.await(third.sendActiveMessage(5, null, null));
            WireupForgery.await(first.sendActiveMessage(5, null, null));
            assertTrue(held.handled.get() >= 3, "b handled " + held.handled.get() + " messages");
        }
    }
}
