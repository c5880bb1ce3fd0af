package dev.fenceline.internal;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;

import dev.fenceline.LaneType;
import dev.fenceline.spi.LaneConnection;
import dev.fenceline.spi.RecordingLane;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import java.util.concurrent.TimeUnit;

@Timeout(value = 60, unit = TimeUnit.SECONDS)
class LaneSelectorTest {
    static LaneTable table(Set<?>... types) {
        List<LaneConnection> l = new java.util.ArrayList<>();
        for (int i = 0; i < types.length; i++) {
            @SuppressWarnings("unchecked")
            Set<LaneType> t = (Set<LaneType>) types[i];
            l.add(new RecordingLane(i + 100, t));
        }
        return LaneTable.of(l);
    }

    @Test
    void shmShapeSplitsShortAndBulk() {
        LaneTable t = table(Set.of(LaneType.AM, LaneType.RMA, LaneType.AMO), Set.of(LaneType.RMA_BW));
        assertArrayEquals(new int[] {0}, LaneSelector.lanesFor(t, OpClass.RMA_SHORT));
        assertArrayEquals(new int[] {1}, LaneSelector.lanesFor(t, OpClass.RMA_LARGE));
        assertArrayEquals(new int[] {0}, LaneSelector.lanesFor(t, OpClass.ATOMIC));
        assertEquals(0b11, LaneSelector.fencedLanes(t));
    }

    @Test
    void atomicsFallBackToTheAmLaneAndSpreadOverAmoRails() {
        LaneTable sw = table(Set.of(LaneType.AM), Set.of(LaneType.RMA_BW));
        assertArrayEquals(new int[] {0}, LaneSelector.lanesFor(sw, OpClass.ATOMIC));
        LaneTable rails = table(Set.of(LaneType.AM, LaneType.AMO), Set.of(LaneType.AMO, LaneType.RMA_BW));
        assertArrayEquals(new int[] {0, 1}, LaneSelector.lanesFor(rails, OpClass.ATOMIC));
    }

    /**
     * Of two AMO lanes, each atomic goes to the one whose hardware does that operation at that width;
     * one neither does in hardware goes to both; the class as a whole (what fences count) is both.
     */
    @Test
    void eachAtomicPrefersALaneThatDoesItInHardware() {
        LaneTable both = table(Set.of(LaneType.AM, LaneType.RMA, LaneType.AMO), Set.of(LaneType.RMA_BW, LaneType.AMO));
        int[] plain = LaneSelector.lanesFor(both, OpClass.ATOMIC);
        assertArrayEquals(new int[] {0, 1}, plain);
        assertArrayEquals(new int[] {0, 1}, LaneSelector.atomicLanesFor(both, plain, dev.fenceline.AtomicOp.ADD, 8));
        RecordingLane sw = new RecordingLane(100, Set.of(LaneType.AM, LaneType.RMA, LaneType.AMO));
        RecordingLane hw = new RecordingLane(101, Set.of(LaneType.RMA_BW, LaneType.AMO));
        hw.capabilities = new dev.fenceline.spi.LaneCapabilities(64, 8192, 1 << 20, true,
                Set.of(dev.fenceline.AtomicOp.ADD), Set.of(dev.fenceline.AtomicOp.ADD, dev.fenceline.AtomicOp.SWAP),
                true, true, false);
        LaneTable t = LaneTable.of(List.of(sw, hw));
        int[] atomic = LaneSelector.lanesFor(t, OpClass.ATOMIC);
        assertArrayEquals(new int[] {0, 1}, atomic, "fences count every lane an atomic may take");
        assertArrayEquals(new int[] {1}, LaneSelector.atomicLanesFor(t, atomic, dev.fenceline.AtomicOp.ADD, 4));
        assertArrayEquals(new int[] {1}, LaneSelector.atomicLanesFor(t, atomic, dev.fenceline.AtomicOp.SWAP, 8));
        assertArrayEquals(new int[] {0, 1}, LaneSelector.atomicLanesFor(t, atomic, dev.fenceline.AtomicOp.SWAP, 4),
                "a 32-bit swap the hardware lacks goes to either lane");
        assertArrayEquals(new int[] {1}, LaneSelector.atomicLanesFor(t, atomic, null, 8), "compare-and-swap");
        int[][] all = LaneSelector.selectAtomics(t, atomic);
        assertArrayEquals(new int[] {0, 1}, all[LaneSelector.atomicIndex(dev.fenceline.AtomicOp.XOR, 8)]);
        assertArrayEquals(new int[] {1}, all[LaneSelector.atomicIndex(dev.fenceline.AtomicOp.ADD, 8)]);
        LaneTable failed = t.withFailed(1);
        assertArrayEquals(new int[] {0}, LaneSelector.atomicLanesFor(failed, LaneSelector.lanesFor(failed,
                OpClass.ATOMIC), dev.fenceline.AtomicOp.ADD, 8), "the software lane takes them when the hardware one fails");
        assertArrayEquals(new int[] {1}, LaneSelector.lanesFor(t, OpClass.RMA_LARGE), "bulk RMA is unaffected");
    }

    @Test
    void failedLanesAreNotSelected() {
        LaneTable t = table(Set.of(LaneType.AM, LaneType.RMA), Set.of(LaneType.RMA_BW)).withFailed(1);
        assertArrayEquals(new int[] {0}, LaneSelector.lanesFor(t, OpClass.RMA_LARGE), "falls back to RMA");
        assertArrayEquals(new int[0], LaneSelector.lanesFor(t.withFailed(0), OpClass.ACTIVE_MESSAGE));
        assertEquals(0b01, t.liveMask());
    }

    private static RecordingLane over(String transport, long id, LaneType... types) {
        RecordingLane l = new RecordingLane(id, Set.of(types));
        l.transport = transport;
        return l;
    }

    @Test
    void lanesOfALaterTransportStandByWhileAnEarlierOneServesTheClass() {
        List<String> order = List.of("shm", "tcp");
        LaneTable t = LaneTable.of(List.of(over("shm", 1, LaneType.AM, LaneType.RMA, LaneType.AMO),
                over("shm", 2, LaneType.RMA_BW), over("tcp", 3, LaneType.AM, LaneType.RMA, LaneType.RMA_BW,
                        LaneType.AMO), over("tcp", 4, LaneType.AM, LaneType.RMA, LaneType.RMA_BW, LaneType.AMO)),
                order);
        assertArrayEquals(new int[] {0}, LaneSelector.lanesFor(t, OpClass.RMA_SHORT));
        assertArrayEquals(new int[] {1}, LaneSelector.lanesFor(t, OpClass.RMA_LARGE));
        assertArrayEquals(new int[] {0}, LaneSelector.lanesFor(t, OpClass.ATOMIC));
        assertArrayEquals(new int[] {0}, LaneSelector.lanesFor(t, OpClass.ACTIVE_MESSAGE));
        assertEquals(0b11, LaneSelector.fencedLanes(t), "the tcp lanes carry nothing while shm serves");
        // shm's bulk lane fails: large RMA falls back to shm's RMA lane, not over to tcp.
        LaneTable noBulk = t.withFailed(1);
        assertArrayEquals(new int[] {0}, LaneSelector.lanesFor(noBulk, OpClass.RMA_LARGE));
        // Every shm lane fails: everything moves to both tcp rails.
        LaneTable tcpOnly = noBulk.withFailed(0);
        for (OpClass c : OpClass.values()) {
            assertArrayEquals(new int[] {2, 3}, LaneSelector.lanesFor(tcpOnly, c), c.name());
        }
        // shm recovers: it takes the traffic back.
        LaneTable back = tcpOnly.withSlot(0, over("shm", 5, LaneType.AM, LaneType.RMA, LaneType.AMO));
        assertArrayEquals(new int[] {0}, LaneSelector.lanesFor(back, OpClass.ATOMIC));
        assertArrayEquals(new int[] {0}, LaneSelector.lanesFor(back, OpClass.RMA_LARGE), "RMA on shm over tcp");
    }

    @Test
    void aClassThatTheFirstTransportCannotServeUsesTheNext() {
        // An AM-less first transport (a bulk-only lane): active messages go to tcp, RMA stays.
        LaneTable t = LaneTable.of(List.of(over("cma", 1, LaneType.RMA_BW), over("tcp", 2, LaneType.AM,
                LaneType.RMA, LaneType.AMO)), List.of("cma", "tcp"));
        assertArrayEquals(new int[] {1}, LaneSelector.lanesFor(t, OpClass.ACTIVE_MESSAGE));
        assertArrayEquals(new int[] {0}, LaneSelector.lanesFor(t, OpClass.RMA_SHORT), "RMA_BW on cma before tcp");
        assertArrayEquals(new int[] {1}, LaneSelector.lanesFor(t, OpClass.ATOMIC));
        assertEquals(1, t.tier(1));
        LaneTable unknown = LaneTable.of(List.of(over("other", 1, LaneType.AM)), List.of("cma", "tcp"));
        assertEquals(2, unknown.tier(0), "a transport not in the order comes after those that are");
    }
}
