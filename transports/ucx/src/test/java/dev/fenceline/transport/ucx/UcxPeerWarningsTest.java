package dev.fenceline.transport.ucx;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * A warning any sender can provoke (a malformed wireup message, a refused connect) is logged the
 * first time and at every power of two after: a flood of a thousand costs ten lines, and the
 * message is made only for those.
 */
class UcxPeerWarningsTest {
    @Test
    void aFloodOfWarningsIsLoggedAtPowersOfTwo() {
        UcxPeerWarnings w = new UcxPeerWarnings("w");
        List<Integer> made = new ArrayList<>();
        for (int i = 1; i <= 1000; i++) {
            int n = i;
            w.warn(() -> {
                made.add(n);
                return "a malformed wireup message " + n;
            });
        }
        assertEquals(List.of(1, 2, 4, 8, 16, 32, 64, 128, 256, 512), made);
        assertEquals(1000, w.count());
    }
}
