package dev.fenceline.transport.tcp;

import dev.fenceline.Endpoint;
import dev.fenceline.LaneInfo;
import dev.fenceline.Worker;
import dev.fenceline.WorkerAddress;
import java.net.InetSocketAddress;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.function.Predicate;

/** For the failover tests: a target's address through relays, and waiting for lane 0 to reach a state. */
final class Lanes {
    private Lanes() {
    }

    /**
     * @param target the target worker
     * @param rails the addresses to reach its rails by (a relay's, or a rail's own)
     * @return the target's address with those rails
     */
    static WorkerAddress through(Worker target, InetSocketAddress... rails) {
        return new WorkerAddress(target.address().workerId(), target.address().name(),
                Map.of("tcp", TcpAddress.encode(List.of(rails))));
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
