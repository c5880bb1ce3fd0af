package dev.fenceline.transport.shm;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.code_intelligence.jazzer.junit.FuzzTest;
import dev.fenceline.FencelineException;

/**
 * Coverage-guided fuzzing of a worker address's shm part, as a peer (or a directory) hands it over:
 * every input decodes to an address that names a control segment and encodes back to the same
 * bytes, or is refused with the typed error.
 */
class ShmAddressFuzzTest {
    @FuzzTest(maxExecutions = 1_000_000)
    void address(byte[] input) {
        ShmAddress a;
        try {
            a = ShmAddress.decode(input);
        } catch (FencelineException refused) {
            return;
        }
        assertTrue(Segments.isControlName(a.control()), a.control());
        assertArrayEquals(input, a.encode(), "decodes and encodes back the same");
    }
}
