package dev.fenceline.perf;

import static org.junit.jupiter.api.Assertions.assertEquals;

import org.junit.jupiter.api.Test;

/** The median of the last iterations is taken as ucx_perftest takes its percentile. */
class LatenciesTest {
    @Test
    void theLastMedianIsTheLowerMiddleOfTheLast2048() {
        Latencies l = new Latencies();
        assertEquals(0, l.lastMedian(), "none recorded");
        for (long v = 5; v >= 1; v--) {
            l.recordValue(v * 1000);
        }
        assertEquals(3000, l.lastMedian(), "five: the third smallest");
        l.recordValue(6000);
        assertEquals(3000, l.lastMedian(), "six: the lower of the two middle ones");
        Latencies many = new Latencies();
        for (long v = 1; v <= 5000; v++) {
            many.recordValue(v);
        }
        // The last 2,048 are 2,953..5,000; their lower middle is the 1,024th of them.
        assertEquals(2953 + 1023, many.lastMedian());
        assertEquals(5000, many.all().getTotalCount(), "the histogram keeps every iteration");
        assertEquals(2500, many.all().getValueAtPercentile(50), 2);
    }
}
