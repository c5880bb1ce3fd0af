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

    @Test
    void failedLanesAreNotSelected() {
        LaneTable t = table(Set.of(LaneType.AM, LaneType.RMA), Set.of(LaneType.RMA_BW)).withFailed(1);
        assertArrayEquals(new int[] {0}, LaneSelector.lanesFor(t, OpClass.RMA_LARGE), "falls back to RMA");
        assertArrayEquals(new int[0], LaneSelector.lanesFor(t.withFailed(0), OpClass.ACTIVE_MESSAGE));
        assertEquals(0b01, t.liveMask());
    }
}
