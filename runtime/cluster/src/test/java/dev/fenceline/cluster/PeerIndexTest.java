package dev.fenceline.cluster;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.fenceline.WorkerAddress;
import java.util.Map;
import java.util.Set;
import java.util.UUID;
import org.apache.pekko.actor.Address;
import org.junit.jupiter.api.Test;

/** Which workers belong to which member incarnation: plain data, no cluster. */
class PeerIndexTest {
    private static final Address NODE = new Address("pekko", "svc", "127.0.0.1", 2552);

    private static ClusterWorker worker(long uid, String name) {
        return new ClusterWorker(NODE, uid, name, new WorkerAddress(UUID.randomUUID(), name, Map.of()));
    }

    @Test
    void aGoneIncarnationTakesItsWorkersWithItAndOnlyThem() {
        PeerIndex index = new PeerIndex();
        ClusterWorker old1 = worker(1, "kv");
        ClusterWorker old2 = worker(1, "log");
        ClusterWorker fresh = worker(2, "kv"); // the same address, restarted
        assertTrue(index.add(old1) && index.add(old2) && index.add(fresh));
        Set<UUID> gone = index.memberGone(NODE, 1);
        assertEquals(Set.of(old1.address().workerId(), old2.address().workerId()), gone);
        assertTrue(index.isGone(old1.address().workerId()));
        assertFalse(index.isGone(fresh.address().workerId()), "the new incarnation's worker is not gone");
        assertEquals(Set.of(fresh.address().workerId()), index.workersOf(NODE, 2));
        assertEquals(Set.of(), index.memberGone(NODE, 1), "gone once");
    }

    @Test
    void aLateDescriptionOfAGoneIncarnationIsRefused() {
        PeerIndex index = new PeerIndex();
        index.memberGone(NODE, 7);
        assertFalse(index.add(worker(7, "kv")), "described after its member was removed");
        assertTrue(index.isGone(NODE, 7));
        assertEquals(Set.of(), index.workersOf(NODE, 7));
    }

    @Test
    void aWithdrawnWorkerIsForgottenWhileItsMemberStays() {
        PeerIndex index = new PeerIndex();
        ClusterWorker w = worker(3, "kv");
        index.add(w);
        index.withdrawn(w);
        assertEquals(Set.of(), index.workersOf(NODE, 3));
        assertEquals(Set.of(), index.memberGone(NODE, 3), "nothing of it left to fail");
    }

    @Test
    void onlyTheLatestGoneIncarnationsAreRemembered() {
        PeerIndex index = new PeerIndex();
        for (int uid = 0; uid < PeerIndex.REMEMBERED + 10; uid++) {
            index.add(worker(uid, "kv"));
            index.memberGone(NODE, uid);
        }
        assertFalse(index.isGone(NODE, 0), "the oldest are forgotten: memory stays bounded");
        assertTrue(index.isGone(NODE, PeerIndex.REMEMBERED + 9));
        assertEquals(PeerIndex.REMEMBERED, index.goneWorkers().size());
    }
}
