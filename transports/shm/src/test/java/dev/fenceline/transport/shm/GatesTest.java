package dev.fenceline.transport.shm;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.ByteBuffer;
import java.util.SplittableRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import org.agrona.concurrent.UnsafeBuffer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** The gate protocol between an origin that revokes and a target that enters and leaves. */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class GatesTest {
    private final Gates gates = new Gates(new UnsafeBuffer(ByteBuffer.allocateDirect(4 * Gates.SLOT)));

    @Test
    void anIdleGateRevokedSaysExactlyHowManyWereTakenAndLetsNoMoreThrough() {
        gates.open(1, 42);
        for (int i = 0; i < 3; i++) {
            assertTrue(gates.enter(1, 42));
            gates.leave(1);
        }
        assertFalse(gates.enter(1, 41), "another connection's record is refused");
        Gates.Revoked r = gates.revoke(1);
        assertEquals(3, r.taken());
        assertFalse(r.inProgress());
        assertFalse(gates.enter(1, 42), "nothing after the revocation");
        assertEquals(r, gates.revoke(1), "revoking again says the same");
    }

    @Test
    void aGateRevokedWhileBusyLetsThatOneFinishAsTheLast() {
        gates.open(2, 7);
        assertTrue(gates.enter(2, 7));
        Gates.Revoked r = gates.revoke(2);
        assertEquals(0, r.taken());
        assertTrue(r.inProgress(), "one is being applied: it will be the last");
        assertTrue(gates.busy(2));
        gates.leave(2);
        assertEquals(1, gates.taken(2));
        assertFalse(gates.busy(2));
        assertFalse(gates.enter(2, 7));
        assertEquals(new Gates.Revoked(1, false), gates.revoke(2));
    }

    @Test
    void aReopenedSlotRefusesTheOldConnectionsLateRecords() {
        gates.open(3, 100);
        gates.revoke(3);
        gates.open(3, 200);
        assertFalse(gates.enter(3, 100), "a late record of the old connection");
        assertTrue(gates.enter(3, 200));
        gates.leave(3);
        assertEquals(1, gates.taken(3));
        assertFalse(gates.valid(4));
        assertFalse(gates.valid(-1));
        assertTrue(gates.valid(0));
    }

    /** A target thread applies records while the origin revokes at a random moment: the count is exact. */
    @Test
    void aRevocationRacingTheTargetNeverMisses() throws Exception {
        long seed = Long.getLong("fenceline.test.seed", 20261201L);
        System.out.println("GatesTest seed " + seed + " (-Dfenceline.test.seed=" + seed + ")");
        SplittableRandom rnd = new SplittableRandom(seed);
        for (int round = 0; round < 200; round++) {
            gates.open(0, round);
            AtomicLong applied = new AtomicLong();
            AtomicBoolean stop = new AtomicBoolean();
            long conn = round;
            Thread target = new Thread(() -> {
                while (!stop.get()) {
                    if (gates.enter(0, conn)) {
                        applied.incrementAndGet();
                        gates.leave(0);
                    }
                }
            });
            target.start();
            long spin = rnd.nextLong(200_000);
            long until = System.nanoTime() + spin;
            while (System.nanoTime() < until) {
                Thread.onSpinWait();
            }
            Gates.Revoked r = gates.revoke(0);
            stop.set(true);
            target.join();
            long expected = r.taken() + (r.inProgress() ? 1 : 0);
            assertEquals(expected, applied.get(), "round " + round + " (seed " + seed + "): " + r);
            assertEquals(expected, gates.taken(0));
        }
    }

    /**
     * A peer that keeps changing a gate's word (it is in shared memory) never keeps a thread in the
     * compare-and-swap loops: the target drops the record, or leaves the gate busy; the origin
     * revokes by one atomic add, exact whatever the peer does.
     */
    @Test
    @Timeout(value = 20, unit = TimeUnit.SECONDS, threadMode = Timeout.ThreadMode.SEPARATE_THREAD) // a loop that never ends fails
    void aWordThatNeverHoldsStillEndsEveryLoop() {
        AtomicLong tries = new AtomicLong();
        UnsafeBuffer flipping = new UnsafeBuffer(ByteBuffer.allocateDirect(4 * Gates.SLOT)) {
            @Override
            public boolean compareAndSetLong(int index, long expected, long update) {
                tries.incrementAndGet();
                putLongVolatile(index, getLongVolatile(index) ^ (8L << 2)); // the peer moved it first
                return false;
            }
        };
        Gates g = new Gates(flipping);
        g.open(1, 42);
        assertFalse(g.enter(1, 42), "never entered");
        assertEquals(Gates.MAX_TRIES, tries.get());
        flipping.putLongVolatile(Gates.SLOT + 8, (5L << 2) | Gates.BUSY);
        assertFalse(g.leave(1), "left busy");
        assertTrue(g.busy(1));
        long before = tries.get();
        Gates.Revoked r = g.revoke(1);
        assertEquals(before, tries.get(), "the origin revokes without a compare-and-swap");
        assertEquals(new Gates.Revoked(5, true), r, "exactly what the word said: one being applied");
        assertTrue(g.busy(1) && (flipping.getLongVolatile(Gates.SLOT + 8) & Gates.REVOKED) != 0, "revoked");
        assertEquals(new Gates.Revoked(5, true), g.revoke(1), "revoking again changes nothing");
        assertFalse(g.enter(1, 42), "a revoked gate lets nothing through");
    }
}
