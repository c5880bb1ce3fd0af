package dev.fenceline.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertSame;

import dev.fenceline.LaneType;
import dev.fenceline.spi.RecordingLane;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import java.util.concurrent.TimeUnit;

/** Lane identity (docs/fences.md): the generation changes iff the connection in a slot changes. */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class LaneTableTest {
    private final RecordingLane x = new RecordingLane(1, Set.of(LaneType.AM));
    private final RecordingLane y = new RecordingLane(2, Set.of(LaneType.AM));

    @Test
    void generationChangesOnlyWhenTheConnectionChanges() {
        LaneTable t = LaneTable.of(List.of(x));
        assertSame(t, t.withSlot(0, x), "same connection: no change");
        LaneTable failed = t.withFailed(0);
        assertEquals(1, failed.generation(), "x -> null");
        assertEquals(0, failed.liveMask());
        LaneTable recovered = failed.withSlot(0, y);
        assertEquals(2, recovered.generation(), "null -> y");
        assertEquals(3, recovered.withSlot(0, x).generation(), "y -> x");
        LaneTable added = recovered.withAdded(x);
        assertEquals(3, added.generation());
        assertEquals(0b11, added.liveMask());
        assertEquals(2, added.describe().size());
        assertEquals(x.id(), added.describe().get(1).connectionId());
    }
}
