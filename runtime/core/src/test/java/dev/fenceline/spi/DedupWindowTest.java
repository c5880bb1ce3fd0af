package dev.fenceline.spi;

import static org.junit.jupiter.api.Assertions.assertEquals;

import dev.fenceline.spi.DedupWindow.Seen;
import org.junit.jupiter.api.Test;

class DedupWindowTest {
    @Test
    void duplicatesGetTheFirstResultAndOldOnesAreUnknown() {
        DedupWindow w = new DedupWindow(4);
        assertEquals(Seen.NEW, w.lookup(0));
        w.record(0, 41);
        assertEquals(Seen.DUPLICATE, w.lookup(0));
        assertEquals(41, w.result(0));
        for (long s = 1; s <= 5; s++) {
            assertEquals(Seen.NEW, w.lookup(s));
            w.record(s, s * 10);
        }
        assertEquals(Seen.TOO_OLD, w.lookup(0), "evicted and more than a window behind");
        assertEquals(Seen.TOO_OLD, w.lookup(1));
        assertEquals(Seen.DUPLICATE, w.lookup(5));
        assertEquals(50, w.result(5));
        assertEquals(Seen.NEW, w.lookup(6));
        assertEquals(Seen.NEW, w.lookup(100), "far ahead is new");
    }

    @Test
    void outOfOrderArrivalsWithinTheWindowAreNew() {
        DedupWindow w = new DedupWindow(8);
        w.record(5, 1);
        assertEquals(Seen.NEW, w.lookup(3), "sequence 3 not seen yet, and within the window");
        w.record(3, 2);
        assertEquals(Seen.DUPLICATE, w.lookup(3));
    }
}
