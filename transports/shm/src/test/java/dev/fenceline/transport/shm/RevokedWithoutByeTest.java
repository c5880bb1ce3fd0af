package dev.fenceline.transport.shm;

import static org.junit.jupiter.api.Assertions.assertTrue;

import com.typesafe.config.ConfigFactory;
import dev.fenceline.Fenceline;
import dev.fenceline.Worker;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * An origin that revoked a connection's gate but could not send its BYE (the target's ring was
 * full: a stalled target being given up) has the connection forgotten at the target's next
 * housekeeping: it no longer holds the origin's window nor counts against its lanes there.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class RevokedWithoutByeTest {
    @Test
    void aConnectionWhoseGateWasRevokedIsForgottenWithoutItsBye() throws Exception {
        try (Fenceline f = Fenceline.create(ConfigFactory.parseString("""
                fenceline.transports = [shm]
                fenceline.transport.shm.cma = off
                fenceline.transport.shm.max-lanes = 1
                """));
                FakeShmPeer fake = FakeShmPeer.create(64 << 10)) {
            Worker b = FakeShmPeer.worker(f, "b");
            fake.connect(b); // gate 0: the one connection max-lanes allows from it
            fake.inbox.gates.revoke(0); // given up, and no BYE sent
            long next = 0x0fa4_e000_0000_0002L;
            fake.inbox.gates.open(1, next);
            long until = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
            boolean connected = false;
            while (!connected && System.nanoTime() < until) {
                fake.sendConnect(b, 1, next); // dropped while the first still counts: sent again
                connected = fake.connected(next, 200);
            }
            assertTrue(connected, "the revoked connection was forgotten, so a new one is taken");
        }
    }
}
