package dev.fenceline.cluster;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.fenceline.WorkerAddress;
import java.util.ArrayList;
import java.util.List;
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
        for (ClusterWorker w : List.of(old1, old2, fresh)) {
            assertEquals(PeerIndex.Added.INDEXED, index.add(w));
        }
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
        assertEquals(PeerIndex.Added.MEMBER_GONE, index.add(worker(7, "kv")), "described after its member was removed");
        assertTrue(index.isGone(NODE, 7));
        assertEquals(Set.of(), index.workersOf(NODE, 7));
    }

    @Test
    void aMemberClaimingAnotherMembersWorkerIsNotIndexedAndItsGoingLeavesTheWorker() {
        PeerIndex index = new PeerIndex();
        Address other = new Address("pekko", "svc", "127.0.0.2", 2552);
        ClusterWorker real = worker(1, "kv");
        ClusterWorker liar = new ClusterWorker(other, 9, "kv", real.address()); // replays real's address
        assertEquals(PeerIndex.Added.INDEXED, index.add(real));
        assertEquals(PeerIndex.Added.CLAIMED, index.add(liar));
        assertEquals(List.of(real), index.all(), "offered once, under its own member");
        assertEquals(Set.of(), index.memberGone(other, 9), "the liar's going takes nothing");
        assertFalse(index.isGone(real.address().workerId()));
        assertEquals(Set.of(real.address().workerId()), index.memberGone(NODE, 1), "its own going does");
    }

    @Test
    void aGoneWorkerClaimedByALiveIncarnationIsNotIndexed() {
        PeerIndex index = new PeerIndex();
        ClusterWorker real = worker(1, "kv");
        assertEquals(PeerIndex.Added.INDEXED, index.add(real));
        assertEquals(Set.of(real.address().workerId()), index.memberGone(NODE, 1));
        Address other = new Address("pekko", "svc", "127.0.0.2", 2552);
        assertEquals(PeerIndex.Added.CLAIMED, index.add(new ClusterWorker(other, 10, "kv", real.address())));
        assertEquals(List.of(), index.all());
        assertTrue(index.isGone(real.address().workerId()), "still cut off");
    }

    /**
     * Which of two claimants lies is not known here: the first incarnation described with a worker
     * id owns it, and its going cuts that worker off (a stale member must not write on), even where
     * the liar was first. Its late description after that claims nothing.
     */
    @Test
    void theFirstDescribedOwnsAWorkerAndALateClaimOfAGoneOneTakesNothing() {
        PeerIndex index = new PeerIndex();
        Address other = new Address("pekko", "svc", "127.0.0.2", 2552);
        ClusterWorker real = worker(1, "kv");
        ClusterWorker liar = new ClusterWorker(other, 9, "kv", real.address());
        assertEquals(PeerIndex.Added.INDEXED, index.add(real));
        assertEquals(PeerIndex.Added.CLAIMED, index.add(liar));
        index.memberGone(other, 9);
        assertEquals(PeerIndex.Added.MEMBER_GONE, index.add(liar), "a gone claimant's late description");
        assertFalse(index.isGone(real.address().workerId()), "marks nothing gone: the directory cuts nothing off");
        assertEquals(List.of(real), index.all());
    }

    @Test
    void aGoneMembersOwnWorkerDescribedAgainIsGoneNotClaimed() {
        PeerIndex index = new PeerIndex();
        ClusterWorker w = worker(4, "kv");
        assertEquals(PeerIndex.Added.INDEXED, index.add(w));
        index.memberGone(NODE, 4);
        assertEquals(PeerIndex.Added.MEMBER_GONE, index.add(w));
    }

    @Test
    void aWithdrawnWorkerStaysIndexedUntilItsMemberGoes() {
        PeerIndex index = new PeerIndex();
        ClusterWorker w = worker(3, "kv");
        index.add(w);
        index.withdrawn(w); // the receptionist may drop a leaving member's workers before the event
        assertEquals(1, index.withdrawnOf(NODE, 3));
        assertEquals(Set.of(w.address().workerId()), index.memberGone(NODE, 3), "its endpoints are still found");
        assertEquals(0, index.withdrawnOf(NODE, 3));
    }

    @Test
    void aWorkerListedAgainIsNoLongerWithdrawn() {
        PeerIndex index = new PeerIndex();
        ClusterWorker w = worker(4, "kv");
        index.add(w);
        index.withdrawn(w);
        index.add(w);
        assertEquals(0, index.withdrawnOf(NODE, 4));
        assertEquals(Set.of(w.address().workerId()), index.workersOf(NODE, 4));
    }

    /** A member that opens and closes workers for ever does not grow another member's index. */
    @Test
    void onlyTheLatestWithdrawnWorkersOfAnIncarnationAreKept() {
        PeerIndex index = new PeerIndex();
        ClusterWorker live = worker(5, "live");
        index.add(live);
        List<ClusterWorker> closed = new ArrayList<>();
        for (int k = 0; k < PeerIndex.WITHDRAWN_KEPT + 3; k++) {
            ClusterWorker w = worker(5, "w" + k);
            closed.add(w);
            index.add(w);
            index.withdrawn(w);
        }
        assertEquals(PeerIndex.WITHDRAWN_KEPT, index.withdrawnOf(NODE, 5));
        Set<UUID> indexed = index.workersOf(NODE, 5);
        assertEquals(PeerIndex.WITHDRAWN_KEPT + 1, indexed.size(), "the kept withdrawn ones and the live one");
        assertTrue(indexed.contains(live.address().workerId()), "a listed worker is never dropped");
        for (int k = 0; k < 3; k++) {
            assertFalse(indexed.contains(closed.get(k).address().workerId()), "the oldest withdrawn are forgotten: " + k);
        }
        assertTrue(indexed.contains(closed.get(closed.size() - 1).address().workerId()));
        assertEquals(PeerIndex.WITHDRAWN_KEPT + 1, index.memberGone(NODE, 5).size());
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
