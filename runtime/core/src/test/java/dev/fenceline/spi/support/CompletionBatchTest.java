package dev.fenceline.spi.support;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.fenceline.FencelineException;
import dev.fenceline.spi.LaneConnection;
import dev.fenceline.spi.LaneListener;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import org.junit.jupiter.api.Test;

/** A batch starts small, doubles while filled up to its most, keeps every entry in order, and says full at the most. */
class CompletionBatchTest {
    private static final class Reports implements LaneListener {
        final List<long[]> tokens = new ArrayList<>();
        final List<long[]> values = new ArrayList<>();

        @Override
        public void onCompletedBatch(long[] t, long[] v, int count) {
            tokens.add(Arrays.copyOf(t, count));
            values.add(Arrays.copyOf(v, count));
        }

        @Override
        public void onCompleted(long token, long value) {
        }

        @Override
        public void onFailed(long token, FencelineException error) {
        }

        @Override
        public void onFlushed(long token) {
        }

        @Override
        public void onFlushFailed(long token, FencelineException error) {
        }

        @Override
        public void onReady() {
        }

        @Override
        public void onLaneFailed(Throwable cause) {
        }

        @Override
        public void onReplaced(LaneConnection replacement) {
        }

        @Override
        public void onRecovered(LaneConnection connection) {
        }

        @Override
        public void onLaneAdded(LaneConnection connection) {
        }
    }

    @Test
    void growsWhileFilledAndSaysFullOnlyAtItsMost() {
        CompletionBatch b = new CompletionBatch(2, 16);
        for (int i = 0; i < 15; i++) {
            assertFalse(b.add(i, i * 10L), "room up to 16: entry " + i);
        }
        assertTrue(b.add(15, 150), "the 16th fills it");
        assertEquals(16, b.size());
        Reports r = new Reports();
        b.report(r);
        long[] want = new long[16];
        long[] values = new long[16];
        for (int i = 0; i < 16; i++) {
            want[i] = i;
            values[i] = i * 10L;
        }
        assertArrayEquals(want, r.tokens.get(0), "every entry kept across the growth, in order");
        assertArrayEquals(values, r.values.get(0));
        assertEquals(0, b.size());
        for (int i = 0; i < 15; i++) {
            assertFalse(b.add(i, 0), "it stays at its most once grown");
        }
        assertTrue(b.add(15, 0));
    }

    @Test
    void aFixedBatchIsFullAtItsCapacityAndBadSizesAreRefused() {
        CompletionBatch b = new CompletionBatch(3);
        assertFalse(b.add(1, 0));
        assertFalse(b.add(2, 0));
        assertTrue(b.add(3, 0));
        assertThrows(IllegalArgumentException.class, () -> new CompletionBatch(0, 4));
        assertThrows(IllegalArgumentException.class, () -> new CompletionBatch(8, 4));
    }
}
