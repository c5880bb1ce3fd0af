package dev.fenceline.testkit;

import static org.junit.jupiter.api.Assertions.assertEquals;

import com.typesafe.config.ConfigFactory;
import dev.fenceline.AtomicOp;
import dev.fenceline.Endpoint;
import dev.fenceline.MemoryRegion;
import dev.fenceline.RemoteKey;
import dev.fenceline.Worker;
import dev.fenceline.spi.support.ExactlyOnceWindows;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Under a deterministic simulation a target's exactly-once windows linger on virtual time, as its
 * actors' timers do: a window its last connection let go is gone once the linger has passed in the
 * simulation, whatever little real time the run took (on real time it would outlive the linger, and
 * the simulation would hide what a late copy meets in a real run).
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class WindowLingerTest {
    private static ExactlyOnceWindows windowsOf(Worker w) throws Exception {
        java.lang.reflect.Field f = w.getClass().getDeclaredField("windows");
        f.setAccessible(true);
        return (ExactlyOnceWindows) f.get(w);
    }

    @Test
    void aLetGoWindowLingersOnVirtualTime() throws Exception {
        long seed = DeterministicSimulation.seedFromEnvironment(20261205L);
        try (DeterministicSimulation sim = DeterministicSimulation.start(seed, ConfigFactory.parseString(
                "fenceline.exactly-once.linger = 10m\nfenceline.transport.sim.direct-access = off"))) {
            Worker a = sim.await(sim.fenceline().newWorker("a"));
            Worker b = sim.await(sim.fenceline().newWorker("b"));
            MemoryRegion region = b.allocate(64);
            RemoteKey key = a.unpackRemoteKey(region.remoteKey().toBytes());
            Endpoint ep = sim.await(a.connect(b.address()));
            assertEquals(0L, (long) sim.await(ep.atomicFetch64(AtomicOp.ADD, region.address(), key, 1)));
            ExactlyOnceWindows windows = windowsOf(b);
            assertEquals(1, windows.held(), "the endpoint's window is held while its lane lives (" + sim.reproduce()
                    + ")");
            sim.await(ep.close());
            assertEquals(0, windows.held(), "let go with the endpoint's close");
            assertEquals(1, windows.size(), "and lingering");
            sim.advance(Duration.ofMinutes(9));
            assertEquals(1, windows.size(), "still lingering within the linger (" + sim.reproduce() + ")");
            sim.advance(Duration.ofMinutes(2));
            assertEquals(0, windows.size(), "gone once the linger passed on the simulation's time ("
                    + sim.reproduce() + ")");
        }
    }
}
