package dev.fenceline.spi.support;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;

/** A batch starts small, doubles while filled up to its most, keeps every entry in order, and says full at the most. */
class CompletionBatchTest {
    @Test
    void growsWhileFilledAndSaysFullOnlyAtItsMost() {
        CompletionBatch b = new CompletionBatch(2, 16);
        for (int i = 0; i < 15; i++) {
            assertFalse(b.add(i, i * 10L), "room up to 16: entry " + i);
        }
        assertTrue(b.add(15, 150), "the 16th fills it");
        assertEquals(16, b.size());
        BatchRecorder r = new BatchRecorder();
        b.report(r);
        StringBuilder want = new StringBuilder();
        for (int i = 0; i < 16; i++) {
            want.append(i == 0 ? "" : " ").append(i).append('=').append(i * 10L);
        }
        assertEquals(java.util.List.of(want.toString()), r.batches, "every entry kept across the growth, in order");
        assertEquals(0, b.size());
        for (int i = 0; i < 15; i++) {
            assertFalse(b.add(i, 0), "it stays at its most once grown");
        }
        assertTrue(b.add(15, 0));
    }

    @Test
    void anEmptyBatchHoldsNothingUntilItsFirstCompletion() {
        CompletionBatch b = new CompletionBatch(0, 4);
        assertEquals(0, b.size());
        BatchRecorder r = new BatchRecorder();
        b.report(r);
        assertEquals(java.util.List.of(), r.batches, "nothing to report");
        assertFalse(b.add(7, 70));
        assertFalse(b.add(8, 80));
        assertFalse(b.add(9, 90));
        assertTrue(b.add(10, 100), "full at its most");
        b.report(r);
        assertEquals(java.util.List.of("7=70 8=80 9=90 10=100"), r.batches);
    }

    @Test
    void aFixedBatchIsFullAtItsCapacityAndBadSizesAreRefused() {
        CompletionBatch b = new CompletionBatch(3);
        assertFalse(b.add(1, 0));
        assertFalse(b.add(2, 0));
        assertTrue(b.add(3, 0));
        assertThrows(IllegalArgumentException.class, () -> new CompletionBatch(-1, 4));
        assertThrows(IllegalArgumentException.class, () -> new CompletionBatch(0, 0));
        assertThrows(IllegalArgumentException.class, () -> new CompletionBatch(8, 4));
    }
}
