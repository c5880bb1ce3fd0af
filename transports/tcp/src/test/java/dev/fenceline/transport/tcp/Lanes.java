package dev.fenceline.transport.tcp;

import dev.fenceline.Endpoint;
import dev.fenceline.LaneInfo;
import java.util.concurrent.TimeUnit;
import java.util.function.Predicate;

/** Waiting for an endpoint's lane 0 to reach a state, for the failover tests. */
final class Lanes {
    private Lanes() {
    }

    /** Waits up to 20 s for lane 0 of {@code ep} to satisfy {@code condition}, else fails naming {@code what}. */
    static void awaitLaneZero(Endpoint ep, Predicate<LaneInfo> condition, String what) throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
        while (!condition.test(ep.lanes().get(0))) {
            if (System.nanoTime() > deadline) {
                throw new AssertionError("timed out waiting for " + what + ": " + ep.lanes());
            }
            Thread.sleep(10);
        }
    }
}
