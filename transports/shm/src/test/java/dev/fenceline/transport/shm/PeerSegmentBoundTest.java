package dev.fenceline.transport.shm;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.typesafe.config.ConfigFactory;
import dev.fenceline.EndpointFailedException;
import dev.fenceline.Fenceline;
import dev.fenceline.Worker;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * A worker maps at most max-peers peer control segments, and a CONNECT whose gate does not show it
 * is its origin's leaves no mapping behind (unmapped at once): segments made only to be named in
 * CONNECTs take none of the room real peers need.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class PeerSegmentBoundTest {
    /** @return how many of this process's mappings are of the fake's segment */
    private static long mappingsOf(FakeShmPeer fake) throws java.io.IOException {
        String name = fake.file.getFileName().toString();
        try (java.util.stream.Stream<String> maps = java.nio.file.Files.lines(java.nio.file.Path.of("/proc/self/maps"))) {
            // A sealed segment's mappings show its memfd; a plain file's, its path.
            return maps.filter(l -> l.endsWith("/memfd:" + name + " (deleted)") || l.endsWith(name)).count();
        }
    }

    @Test
    void refusedConnectsMapNothingAndTheBoundHolds() throws Exception {
        List<FakeShmPeer> fakes = new ArrayList<>();
        try (Fenceline f = Fenceline.create(ConfigFactory.parseString("""
                fenceline.transports = [shm]
                fenceline.transport.shm.cma = off
                fenceline.transport.shm.max-peers = 2
                """))) {
            for (int i = 0; i < 7; i++) {
                fakes.add(FakeShmPeer.create(64 << 10));
            }
            Worker b = FakeShmPeer.worker(f, "b");
            for (FakeShmPeer made : fakes.subList(0, 4)) {
                made.sendConnect(b, 2, 0x0fa4_e000_0000_0009L); // a gate it never opened
                assertFalse(made.connected(0x0fa4_e000_0000_0009L, 100), "dropped");
                // This process maps the fake's segment once as the fake; the worker's mapping to read
                // its gate is gone at once, not left for a garbage collection.
                assertEquals(1, mappingsOf(made), "mappings of " + made.file);
            }
            fakes.get(4).connect(b); // the room is still there for two real peers
            FakeShmPeer second = fakes.get(5);
            long own = 0x0fa4_e000_0000_0005L; // a target keys connections by id: each peer its own
            second.inbox.gates.open(1, own);
            second.sendConnect(b, 1, own);
            assertTrue(second.connected(own, 10_000), "a second peer's CONNECT is taken");
            FakeShmPeer third = fakes.get(6);
            long conn = 0x0fa4_e000_0000_0003L;
            third.inbox.gates.open(1, conn);
            third.sendConnect(b, 1, conn);
            assertFalse(third.connected(conn, 500), "a third peer's CONNECT is dropped at max-peers = 2");
            ExecutionException e = assertThrows(ExecutionException.class,
                    () -> b.connect(third.address()).toCompletableFuture().get(10, TimeUnit.SECONDS));
            assertInstanceOf(EndpointFailedException.class, e.getCause());
            assertTrue(e.getCause().getMessage().contains("max-peers = 2"), e.getCause().getMessage());
        } finally {
            for (FakeShmPeer fake : fakes) {
                fake.close();
            }
        }
    }
}
