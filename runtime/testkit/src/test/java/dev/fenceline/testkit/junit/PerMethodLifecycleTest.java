package dev.fenceline.testkit.junit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.fenceline.Fenceline;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.RepeatedTest;
import org.junit.jupiter.api.Timeout;

/** Per method: each test gets a fresh runtime, and the one before it is shut down. */
@FencelineTest(lifecycle = FencelineTest.Lifecycle.PER_METHOD, seed = 5)
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class PerMethodLifecycleTest {
    private static final List<Fenceline> SEEN = new ArrayList<>();
    private final Fenceline fromConstructor;

    PerMethodLifecycleTest(Fenceline fenceline) {
        this.fromConstructor = fenceline;
    }

    @RepeatedTest(3)
    void eachTestHasItsOwnRuntime(Fenceline fenceline) throws Exception {
        assertSame(fromConstructor, fenceline, "the constructor gets this test's runtime");
        for (Fenceline earlier : SEEN) {
            assertTrue(earlier != fenceline, "a fresh runtime");
            assertTrue(earlier.system().whenTerminated().isCompleted(), "the earlier test's runtime was shut down");
        }
        SEEN.add(fenceline);
        assertEquals(5, fenceline.system().settings().config().getLong("fenceline.transport.sim.seed"));
        fenceline.newWorker("w").toCompletableFuture().get(10, TimeUnit.SECONDS); // the same name in each: no clash
    }

    @AfterAll
    static void threeRuntimes() {
        assertEquals(3, SEEN.size());
    }
}
