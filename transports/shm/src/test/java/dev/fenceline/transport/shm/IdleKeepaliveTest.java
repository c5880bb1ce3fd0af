package dev.fenceline.transport.shm;

import static org.junit.jupiter.api.Assertions.assertEquals;

import com.typesafe.config.ConfigFactory;
import dev.fenceline.Endpoint;
import dev.fenceline.Fenceline;
import dev.fenceline.Worker;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * An idle endpoint over shm keeps its lanes: the transport watches the peer process (its pid and
 * heartbeat) for both lanes, and a running peer fails neither. Once every idle shm endpoint lost its
 * bulk lane to keepalive after an interval and a timeout (6 s by default), when the cma lane's probe
 * answer did not count. On wall time, with keepalive shortened, because it is about the real
 * transport staying quiet.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class IdleKeepaliveTest {
    @Test
    void anIdleEndpointKeepsEveryLane() throws Exception {
        try (Fenceline f = Fenceline.create(ConfigFactory.parseString("fenceline.transports = [shm]\n"
                + "fenceline.endpoint.keepalive { interval = 20ms, timeout = 100ms }"))) {
            Worker a = f.newWorker("a").toCompletableFuture().get(10, TimeUnit.SECONDS);
            Worker b = f.newWorker("b").toCompletableFuture().get(10, TimeUnit.SECONDS);
            Endpoint ep = a.connect(b.address()).toCompletableFuture().get(10, TimeUnit.SECONDS);
            assertEquals(2, ep.lanes().size(), "a ring lane and a cma lane: " + ep.lanes());
            Thread.sleep(1000); // fifty keepalive intervals, ten timeouts, with nothing to do
            assertEquals(java.util.List.of(true, true), ep.lanes().stream().map(l -> l.live()).toList(),
                    ep.lanes().toString());
            assertEquals(0, a.statistics().reconfigurations(), a.statistics().toString());
        }
    }
}
