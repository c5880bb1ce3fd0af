package dev.fenceline.transport.ucx;

import static org.junit.jupiter.api.Assertions.assertTrue;

import com.typesafe.config.ConfigFactory;
import dev.fenceline.Fenceline;
import dev.fenceline.FencelineException;
import dev.fenceline.Worker;
import dev.fenceline.spi.LaneConnection;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * A peer's key table is mapped from the address this worker knows it by: a later CONNECT naming
 * that worker's id, with an address of its sender's making, does not bring a table the peer did
 * not have (the sender's own, say, which calling threads would then check that peer's keys against).
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class UcxPeersTest {
    @BeforeAll
    static void ucx() {
        UcxAssumptions.ucxAvailable();
    }

    private static final UcxWiringReports NO_REPORTS = new UcxWiringReports() {
        @Override
        public void dialed(long dial, List<LaneConnection> lanes) {
        }

        @Override
        public void dialFailed(long dial, FencelineException why) {
        }

        @Override
        public void peerSeen(UUID peer, long pid, long start) {
        }

        @Override
        public void peerForgotten(UUID peer) {
        }

        @Override
        public void stopped() {
        }
    };

    @Test
    void aKnownPeersTableComesFromItsKnownAddressOnly() throws Exception {
        UctResource posix = UcxNative.resources().stream()
                .filter(r -> r.transport().equals("posix")).findFirst()
                .orElseThrow(() -> new AssertionError("no posix in " + UcxNative.resources()));
        try (Fenceline f = Fenceline.create(ConfigFactory.parseString(
                "fenceline.transports = [ucx]\nfenceline.transport.ucx.tls = [posix]"));
                UctWorker w = UctWorker.create()) {
            Worker other = f.newWorker("other").toCompletableFuture().get(20, TimeUnit.SECONDS);
            UcxAddress withTable = UcxAddress.decode(other.address().transportAddress("ucx"));
            assertTrue(withTable.table() != null, "a worker over posix publishes its key table: " + withTable);
            UcxAddress without = new UcxAddress(withTable.host(), withTable.pid(), withTable.start(),
                    withTable.ifaces(), null);
            UctIface iface = w.open(posix, Map.of());
            UcxPeers peers = new UcxPeers(List.of(iface), UcxPeers.thisHost(), "w", NO_REPORTS);

            UcxPeer fresh = peers.peer(UUID.randomUUID(), withTable);
            assertTrue(fresh.table != null, "a peer met with a table on this host has it mapped");

            UUID id = UUID.randomUUID();
            UcxPeer known = peers.peer(id, without);
            assertTrue(known.table == null, "known without a table");
            UcxPeer again = peers.peer(id, withTable); // a CONNECT in its name, with another address
            assertTrue(again == known && again.table == null, "the other address brought its table: " + again.table);
            for (UcxPeer p : peers.allPeers()) {
                UcxPeers.unmapTable(p);
            }
        }
    }
}
