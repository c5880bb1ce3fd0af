package dev.fenceline.transport.ucx;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.code_intelligence.jazzer.junit.FuzzTest;
import dev.fenceline.FencelineException;

/**
 * Coverage-guided fuzzing of a remote key's ucx part, as its owner (another process) wrote it: every
 * input decodes to a part within bounds that encodes back to the same bytes, or is refused with the
 * typed error.
 */
class UcxKeyPartFuzzTest {
    @FuzzTest(maxExecutions = 1_000_000)
    void part(byte[] input) {
        UcxKeyPart p;
        try {
            p = UcxKeyPart.decode(input);
        } catch (FencelineException refused) {
            return;
        }
        assertTrue(p.slot() >= UcxKeyPart.NO_SLOT && p.rkeys().size() <= UcxKeyPart.MAX_RKEYS);
        p.rkeys().values().forEach(k -> assertTrue(k.length <= UcxKeyPart.MAX_RKEY));
        assertArrayEquals(input, p.encode(), "decodes and encodes back the same");
    }
}
