package dev.fenceline.testkit.junit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotSame;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.fenceline.AtomicOp;
import dev.fenceline.Endpoint;
import dev.fenceline.Fenceline;
import dev.fenceline.MemoryRegion;
import dev.fenceline.Worker;
import dev.fenceline.testkit.SimNetwork;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import org.apache.pekko.actor.testkit.typed.javadsl.ActorTestKit;
import org.apache.pekko.actor.testkit.typed.javadsl.TestProbe;
import org.junit.jupiter.api.Nested;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

@FencelineTest(config = "fenceline.transport.sim.lanes = ["
        + "{ types = [AM, RMA, AMO], min-delay = 0us, max-delay = 20us },"
        + "{ types = [AM, RMA_BW, AMO], min-delay = 0us, max-delay = 20us } ]", seed = 42)
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class FencelineExtensionTest {
    private final Fenceline outer;

    FencelineExtensionTest(Fenceline outer) {
        this.outer = outer;
    }

    @Test
    void injectsOneRuntimePerClassOnTheTestKitsSystem(Fenceline fenceline, ActorTestKit kit, SimNetwork net) {
        assertSame(fenceline, Fenceline.get(kit.system()));
        assertSame(outer, fenceline, "the constructor's and the method's are the class's one runtime");
        assertEquals(java.util.List.of("sim"), fenceline.transports());
        assertTrue(net != null);
        assertEquals(42, kit.system().settings().config().getLong("fenceline.transport.sim.seed"));
    }

    @Test
    void aServiceSurvivesALaneFailure(Fenceline fenceline, SimNetwork net, TestProbe<Long> probe) throws Exception {
        Worker a = fenceline.newWorker("a").toCompletableFuture().get(10, TimeUnit.SECONDS);
        Worker b = fenceline.newWorker("b").toCompletableFuture().get(10, TimeUnit.SECONDS);
        MemoryRegion counter = b.allocate(8);
        Endpoint ep = a.connect(b.address()).toCompletableFuture().get(10, TimeUnit.SECONDS);
        assertEquals(2, ep.lanes().size(), "the annotation's lanes");
        for (int i = 0; i < 200; i++) {
            ep.atomicPost64(AtomicOp.ADD, counter.address(), counter.remoteKey(), 1);
            if (i == 100) {
                net.failLane(ep, 1);
            }
        }
        ep.fence();
        ep.atomicFetch64(AtomicOp.ADD, counter.address(), counter.remoteKey(), 0)
                .thenAccept(v -> probe.getRef().tell(v));
        probe.expectMessage(FencelineExtension.dilated(Duration.ofSeconds(10)), 200L);
    }

    /** A nested class without an annotation of its own shares the enclosing class's runtime. */
    @Nested
    class Shared {
        @Test
        void getsTheEnclosingRuntime(Fenceline fenceline, ActorTestKit kit) {
            assertSame(outer, fenceline);
            assertEquals(42, kit.system().settings().config().getLong("fenceline.transport.sim.seed"));
        }
    }

    /** One with its own gets its own, configured by it. */
    @Nested
    @FencelineTest(seed = 7, config = "fenceline.fence.mode = strong")
    class Own {
        @Test
        void getsItsOwnRuntime(Fenceline fenceline, ActorTestKit kit) {
            assertNotSame(outer, fenceline);
            assertEquals("strong", fenceline.fenceMode());
            assertEquals(7, kit.system().settings().config().getLong("fenceline.transport.sim.seed"));
        }
    }
}
