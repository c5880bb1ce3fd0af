package dev.fenceline.transport.ucx;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.code_intelligence.jazzer.junit.FuzzTest;
import dev.fenceline.FencelineException;

/**
 * Coverage-guided fuzzing of a worker address's ucx part, as a peer hands it over: every input
 * decodes to an address whose every iface is within bounds and encodes back to the same bytes, or is
 * refused with the typed error.
 */
class UcxAddressFuzzTest {
    @FuzzTest(maxExecutions = 1_000_000)
    void address(byte[] input) {
        UcxAddress a;
        try {
            a = UcxAddress.decode(input);
        } catch (FencelineException refused) {
            return;
        }
        assertTrue(a.ifaces().size() <= UcxAddress.MAX_IFACES);
        for (UcxAddress.Iface i : a.ifaces()) {
            assertTrue(i.address().length <= UcxAddress.MAX_UCT_ADDRESS);
        }
        assertArrayEquals(input, a.encode(), "decodes and encodes back the same");
    }
}
